"""Pipelines over files and the rate source, run for real on local[2]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from streamjobs.runner.pipeline import PipelineRun
from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import connection, pipeline_job

pytestmark = pytest.mark.spark
EVENT_SCHEMA = "id BIGINT, user STRING, amount DOUBLE, ts TIMESTAMP"


def write_events(directory: Path, name: str, rows: list[dict[str, object]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text("\n".join(json.dumps(row) for row in rows) + "\n")


def events(start: int, count: int) -> list[dict[str, object]]:
    return [
        {"id": i, "user": f"u{i % 3}", "amount": float(i), "ts": f"2026-01-01T00:{i % 60:02d}:00"}
        for i in range(start, start + count)
    ]


def test_rate_to_parquet_runs_until_stopped(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    out = tmp_path / "evens"
    job = pipeline_job(
        "ticks",
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "500 milliseconds"},
        inputs=[{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 50}}],
        steps=[[("evens", "SELECT value FROM ticks WHERE value % 2 = 0")]],
        outputs=[{"name": "evens", "format": "parquet", "path": str(out)}],
    )

    def wrote_two_batches(run: PipelineRun) -> bool:
        progress = run.queries[0].lastProgress if run.queries else None
        return progress is not None and progress["batchId"] >= 2

    assert runner.run(job, stop_when=wrote_two_batches) == 0
    values = [row.value for row in spark.read.parquet(str(out)).collect()]
    assert values
    assert all(value % 2 == 0 for value in values)
    assert (tmp_path / "checkpoints" / "default" / "ticks" / "evens" / "commits").is_dir()
    assert runner.reporter.of_type("progress")


def test_the_stop_file_stops_the_run_after_a_committed_batch(
    runner: PipelineRunner, tmp_path: Path
) -> None:
    stop_file = tmp_path / "stop"
    job = pipeline_job(
        "stoppable",
        trigger={"triggerMode": "ProcessingTime"},
        inputs=[{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 20}}],
        outputs=[{"name": "ticks", "format": "parquet", "path": str(tmp_path / "out")}],
    )

    def committed_a_batch(run: PipelineRun) -> bool:
        progress = run.queries[0].lastProgress if run.queries else None
        if progress is not None and progress["batchId"] >= 1:
            stop_file.touch()
        return False  # the file, not the watcher, must stop the run

    code = runner.run(job, stop_when=committed_a_batch, stop_file=stop_file, timeout=600)
    assert code == 0
    assert stop_file.exists()
    assert list(
        (tmp_path / "checkpoints" / "default" / "stoppable" / "ticks" / "commits").iterdir()
    )
    assert runner.reporter.of_type("driver")[0]["sparkApplicationId"]


def test_json_files_through_a_connection_to_parquet_available_now(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    write_events(landing / "events", "a.json", events(0, 50))
    write_events(landing / "events", "b.json", events(50, 50))
    job = pipeline_job(
        "events",
        inputs=[
            {"name": "events", "format": "json", "dataset": "files:events", "schema": EVENT_SCHEMA}
        ],
        steps=[[("big", "SELECT id, user, amount FROM events WHERE amount >= 10")]],
        outputs=[
            {
                "name": "big",
                "format": "parquet",
                "path": str(tmp_path / "big"),
                "options": {"partitionBy": ["user"]},
            }
        ],
        guarantee="EXACTLY_ONCE",
    )
    files = connection("files", type="files", root=landing.as_uri())
    assert runner.run(job, connections=[files]) == 0
    written = spark.read.parquet(str(tmp_path / "big"))
    assert sorted(row.id for row in written.collect()) == list(range(10, 100))
    assert {row.user for row in written.select("user").distinct().collect()} == {"u0", "u1", "u2"}


def test_once_finishes_with_exit_code_0(runner: PipelineRunner, tmp_path: Path) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 5))
    job = pipeline_job(
        "once",
        trigger={"triggerMode": "Once"},
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        outputs=[{"name": "e", "format": "json", "path": str(tmp_path / "out")}],
    )
    assert runner.run(job) == 0
    assert [e["type"] for e in runner.reporter.events if e["type"] != "progress"][
        -1
    ] == "terminated"


def test_a_stream_static_join(runner: PipelineRunner, spark: SparkSession, tmp_path: Path) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 30))
    users = tmp_path / "users.csv"
    users.write_text("user,tier\nu0,gold\nu1,silver\nu2,bronze\n")
    job = pipeline_job(
        "joined",
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA},
            {
                "name": "users",
                "format": "csv",
                "path": str(users),
                "isStream": False,
                "options": {"header": True},
            },
        ],
        steps=[[("enriched", "SELECT e.id, users.tier FROM e JOIN users ON e.user = users.user")]],
        outputs=[{"name": "enriched", "format": "parquet", "path": str(tmp_path / "out")}],
    )
    assert runner.run(job) == 0
    tiers = {row.id: row.tier for row in spark.read.parquet(str(tmp_path / "out")).collect()}
    assert len(tiers) == 30
    assert tiers[3] == "gold"
    assert tiers[4] == "silver"


def test_a_preview_query_is_watched_and_stopped_with_the_run(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    job = pipeline_job(
        "previewed",
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "500 milliseconds"},
        inputs=[{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 20}}],
        outputs=[{"name": "ticks", "format": "parquet", "path": str(tmp_path / "out")}],
    )
    job["spec"]["pipeline"]["showPreviewLines"] = 2
    watched: list[str] = []

    def wrote_a_batch(run: PipelineRun) -> bool:
        watched[:] = [query.name for query in run.queries]
        progress = run.queries[0].lastProgress if run.queries else None
        return progress is not None and progress["batchId"] >= 1

    assert runner.run(job, stop_when=wrote_a_batch) == 0
    assert watched == ["previewed/ticks", "previewed/ticks/preview"]
    assert spark.streams.active == []
