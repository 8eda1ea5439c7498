"""Pipelines into Delta and Iceberg tables under a lakehouse connection, and forEachBatchMode."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import connection, pipeline_job
from tests.spark.test_file_pipelines import EVENT_SCHEMA, events, write_events

pytestmark = pytest.mark.spark


def lakehouse(tmp_path: Path) -> dict[str, object]:
    return connection("lake", type="lakehouse", warehouse=(tmp_path / "lake").as_uri())


def test_files_to_iceberg(runner: PipelineRunner, spark: SparkSession, tmp_path: Path) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 40))
    job = pipeline_job(
        "to-iceberg",
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        steps=[[("paid", "SELECT id, user, amount FROM e WHERE amount > 0")]],
        outputs=[{"name": "paid", "format": "iceberg", "dataset": "lake:db.paid"}],
        guarantee="EXACTLY_ONCE",
    )
    assert runner.run(job, connections=[lakehouse(tmp_path)]) == 0
    ids = [row.id for row in spark.sql("SELECT id FROM `lake`.db.paid").collect()]
    assert sorted(ids) == list(range(1, 40))


def test_iceberg_table_as_a_stream_into_csv(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 12))
    into_iceberg = pipeline_job(
        "to-iceberg-again",
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        outputs=[{"name": "e", "format": "iceberg", "dataset": "lake:db.events"}],
    )
    assert runner.run(into_iceberg, connections=[lakehouse(tmp_path)]) == 0
    out_of_iceberg = pipeline_job(
        "from-iceberg",
        inputs=[{"name": "events", "format": "iceberg", "dataset": "lake:db.events"}],
        steps=[[("u1", "SELECT id, user FROM events WHERE user = 'u1'")]],
        outputs=[
            {
                "name": "u1",
                "format": "csv",
                "path": str(tmp_path / "u1"),
                "options": {"header": True},
            }
        ],
    )
    assert runner.run(out_of_iceberg, connections=[lakehouse(tmp_path)]) == 0
    written = spark.read.option("header", True).csv(str(tmp_path / "u1")).collect()
    assert sorted(int(row.id) for row in written) == [i for i in range(12) if i % 3 == 1]
    assert {row.user for row in written} == {"u1"}


def test_files_to_delta_then_delta_as_a_stream(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 20))
    into_delta = pipeline_job(
        "to-delta",
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        outputs=[{"name": "e", "format": "delta", "dataset": "lake:raw/events"}],
        guarantee="EXACTLY_ONCE",
    )
    assert runner.run(into_delta, connections=[lakehouse(tmp_path)]) == 0
    out_of_delta = pipeline_job(
        "from-delta",
        inputs=[{"name": "raw", "format": "delta", "dataset": "lake:raw/events"}],
        steps=[[("u0", "SELECT id FROM raw WHERE user = 'u0'")]],
        outputs=[{"name": "u0", "format": "parquet", "path": str(tmp_path / "u0")}],
    )
    assert runner.run(out_of_delta, connections=[lakehouse(tmp_path)]) == 0
    ids = sorted(row.id for row in spark.read.parquet(str(tmp_path / "u0")).collect())
    assert ids == [i for i in range(20) if i % 3 == 0]


def test_for_each_batch_mode_writes_one_batch_to_two_sinks(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 30))
    job = pipeline_job(
        "fan-out",
        forEachBatchMode=True,
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        steps=[
            [("small", "SELECT id FROM e WHERE amount < 10")],
            [("large", "SELECT id FROM e WHERE amount >= 10")],
        ],
        outputs=[
            {"name": "small", "format": "delta", "dataset": "lake:small"},
            {"name": "large", "format": "parquet", "path": str(tmp_path / "large")},
        ],
    )
    assert runner.run(job, connections=[lakehouse(tmp_path)]) == 0
    small = spark.read.format("delta").load(str(tmp_path / "lake" / "small"))
    assert sorted(row.id for row in small.collect()) == list(range(10))
    large = spark.read.parquet(str(tmp_path / "large"))
    assert sorted(row.id for row in large.collect()) == list(range(10, 30))
