"""``processing.stateStore: rocksdb`` keeps state in RocksDB with changelog checkpointing, and
each output's query runs in a FAIR scheduler pool of its own (seen through Spark's REST API)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from streamjobs.domain.spark_conf import ROCKSDB_SETTINGS, SCHEDULER_MODE_SETTING
from streamjobs.runner.pools import POOL_PROPERTY
from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.snapshots]


@pytest.fixture
def state_store_settings_restored(spark: SparkSession) -> Iterator[None]:
    """The run sets the RocksDB provider on the shared session; later tests get theirs back."""
    before = {key: spark.conf.get(key, None) for key in ROCKSDB_SETTINGS}
    yield
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def stages(spark: SparkSession) -> list[dict[str, Any]]:
    """Every stage of the session's application, from Spark's REST API."""
    context = spark.sparkContext
    assert context.uiWebUrl, "the shared test session runs its UI"
    url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/stages"
    with urllib.request.urlopen(url, timeout=30) as response:
        found: list[dict[str, Any]] = json.load(response)
    return found


@pytest.mark.usefixtures("state_store_settings_restored")
def test_rocksdb_state_and_a_pool_per_output(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    (tmp_path / "in").mkdir()
    rows = [{"k": key} for key in ("a", "b", "a")]
    (tmp_path / "in" / "1.json").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    job = pipeline_job(
        "pooled",
        inputs=[
            {
                "name": "arrivals",
                "format": "json",
                "path": str(tmp_path / "in"),
                "schema": "k STRING",
            }
        ],
        steps=[[("per_key", "SELECT k, COUNT(*) AS n FROM arrivals GROUP BY k")]],
        outputs=[
            {
                "name": "per_key",
                "format": "delta",
                "path": str(tmp_path / "per_key"),
                "outputMode": "complete",
            },
            {"name": "arrivals", "format": "json", "path": str(tmp_path / "arrivals")},
        ],
    )
    job["spec"]["processing"]["stateStore"] = "rocksdb"

    assert runner.run(job) == 0

    state = tmp_path / "checkpoints" / "default" / "pooled" / "per_key" / "state"
    assert list(state.rglob("*.changelog")), "RocksDB writes each batch's changes as a changelog"
    counts = {
        row.k: row.n for row in spark.read.format("delta").load(str(tmp_path / "per_key")).collect()
    }
    assert counts == {"a": 2, "b": 1}

    assert spark.sparkContext.getConf().get(SCHEDULER_MODE_SETTING) == "FAIR"
    scheduler = spark.sparkContext._jsc.sc()
    assert scheduler.getPoolForName("per_key").isDefined()
    assert scheduler.getPoolForName("arrivals").isDefined()
    pools = {stage["schedulingPool"] for stage in stages(spark)}
    assert {"per_key", "arrivals"} <= pools
    assert spark.sparkContext.getLocalProperty(POOL_PROPERTY) is None  # reset once started
