"""`pipeline explain` shows every query's plan without starting it, and no secret in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from streamjobs.domain.clock import SystemClock
from streamjobs.domain.datasets import secret_env_var
from streamjobs.runner.main import RunRequest, prepare
from streamjobs.runner.pipeline import PipelineRun
from tests.spark.conftest import CollectingReporter, PipelineRunner
from tests.spark.pipelines import connection, pipeline_job

pytestmark = pytest.mark.spark
SECRET = "org.apache.kafka.common.security.plain.PlainLoginModule required password='s3cr3t-v4lue';"


def test_explain_plans_every_output_and_masks_secrets(
    spark: SparkSession, runner: PipelineRunner, tmp_path: Path
) -> None:
    job = pipeline_job(
        "explained",
        inputs=[
            {
                "name": "orders",
                "format": "kafkajson",
                "dataset": "kafka-main:orders",
                "schema": "id BIGINT, amount DOUBLE",
            }
        ],
        steps=[[("big", "SELECT id FROM orders WHERE amount > 100")]],
        outputs=[
            {"name": "big", "format": "parquet", "path": str(tmp_path / "big")},
            {"name": "orders", "format": "json", "path": str(tmp_path / "all")},
        ],
    )
    kafka = connection(
        "kafka-main",
        type="kafka",
        bootstrapServers="127.0.0.1:9",
        secretOptions={"kafka.sasl.jaas.config": "kafka-jaas"},
    )
    request = RunRequest(
        manifest=runner.write("job.yaml", job),
        connections=runner.write("connections.yaml", kafka),
        checkpoint_root=(tmp_path / "checkpoints").as_uri(),
        environment={secret_env_var("kafka-jaas"): SECRET},
    )
    prepared = prepare(request)
    pipeline_run = PipelineRun(
        spark,
        prepared.job,
        resolver=prepared.resolver,
        reporter=CollectingReporter(),
        clock=SystemClock(),
    )
    plans = pipeline_run.explain()
    assert f"== big -> {tmp_path / 'big'} ==" in plans
    assert f"== orders -> {tmp_path / 'all'} ==" in plans
    assert "amount#" in plans
    assert "s3cr3t-v4lue" not in plans
    assert not spark.streams.active
