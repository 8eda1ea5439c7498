"""batchMode pipelines on real Spark: read once, write once by saveMode, exit 0 (COMPLETED)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyspark.sql import SparkSession

from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import pipeline_job
from tests.spark.test_file_pipelines import EVENT_SCHEMA, events, write_events

pytestmark = pytest.mark.spark


def batch_job(source: Path, target: Path, save_mode: str) -> dict[str, Any]:
    """JSON event files -> the big amounts -> Parquet, as a batch job."""
    job = pipeline_job(
        "events-batch",
        inputs=[{"name": "e", "format": "json", "path": str(source), "schema": EVENT_SCHEMA}],
        steps=[[("big", "SELECT id, user, amount FROM e WHERE amount >= 2")]],
        outputs=[
            {
                "name": "big",
                "format": "parquet",
                "path": str(target),
                "options": {"saveMode": save_mode},
            }
        ],
    )
    pipeline = job["spec"]["pipeline"]
    pipeline["batchMode"] = True
    del pipeline["streaming"]
    return job


def ids_in(spark: SparkSession, target: Path) -> list[int]:
    return sorted(row.id for row in spark.read.parquet(str(target)).collect())


def test_a_batch_job_overwrites_then_appends_and_ends(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    write_events(source, "a.json", events(0, 6))
    assert runner.run(batch_job(source, target, "overwrite")) == 0
    assert ids_in(spark, target) == [2, 3, 4, 5]

    write_events(source, "b.json", events(6, 2))
    assert runner.run(batch_job(source, target, "overwrite")) == 0
    assert ids_in(spark, target) == [2, 3, 4, 5, 6, 7]  # replaced, not added to

    assert runner.run(batch_job(source, target, "append")) == 0
    assert ids_in(spark, target) == sorted([2, 3, 4, 5, 6, 7] * 2)

    written = runner.reporter.of_type("written")
    assert [(event["output"], event["where"]) for event in written] == [("big", str(target))] * 3
    assert runner.reporter.of_type("progress") == []  # no streaming query ran
    assert not (tmp_path / "checkpoints").exists()


def test_errorifexists_fails_the_run_and_ignore_leaves_the_output(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    write_events(source, "a.json", events(0, 4))
    assert runner.run(batch_job(source, target, "errorifexists")) == 0
    write_events(source, "b.json", events(4, 4))
    assert runner.run(batch_job(source, target, "ignore")) == 0
    assert ids_in(spark, target) == [2, 3]
    assert runner.run(batch_job(source, target, "errorifexists")) == 1
    assert ids_in(spark, target) == [2, 3]


def test_streamjobs_pipeline_run_runs_a_batch_job_to_its_end(tmp_path: Path) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    write_events(source, "a.json", events(0, 5))
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(batch_job(source, target, "overwrite")))
    finished = subprocess.run(
        [sys.executable, "-m", "streamjobs.cli", "pipeline", "run", "-f", str(manifest)],
        env={**os.environ, "STREAMJOBS_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert f"output big written to {target}" in finished.stdout
    written = sorted(path.name for path in target.glob("*.parquet"))
    assert written, finished.stdout[-3000:]


@pytest.mark.parametrize("save_mode", ["errorifexists", "ignore"])
def test_an_empty_output_directory_the_server_made_holds_no_data(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path, save_mode: str
) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    write_events(source, "a.json", events(0, 4))
    target.mkdir()  # as the launcher makes it for a sandboxed driver
    assert runner.run(batch_job(source, target, save_mode)) == 0
    assert ids_in(spark, target) == [2, 3]


def test_overwrite_empties_the_directory_and_keeps_it(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    write_events(source, "a.json", events(0, 4))
    assert runner.run(batch_job(source, target, "append")) == 0
    directory = target.stat().st_ino
    write_events(source, "b.json", events(4, 1))
    assert runner.run(batch_job(source, target, "overwrite")) == 0
    assert target.stat().st_ino == directory  # a sandboxed job may not replace it
    assert ids_in(spark, target) == [2, 3, 4]


def test_a_failed_write_ends_the_run_with_the_java_error_in_one_line(
    runner: PipelineRunner, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in"
    write_events(source, "a.json", events(0, 2))
    job = batch_job(source, tmp_path / "out", "append")
    job["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] = (
        "SELECT id, raise_error('boom in batch') AS x FROM e"
    )
    assert runner.run(job) == 1
    [line] = [text for text in capsys.readouterr().err.splitlines() if text.startswith("error:")]
    assert "boom in batch" in line
    assert runner.reporter.of_type("written") == []


def test_a_batch_job_writes_delta_by_its_save_mode(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    source, target = tmp_path / "in", tmp_path / "delta"
    write_events(source, "a.json", events(0, 4))

    def to_delta(save_mode: str) -> dict[str, Any]:
        job = batch_job(source, target, save_mode)
        job["spec"]["pipeline"]["outputs"][0]["format"] = "delta"
        return job

    assert runner.run(to_delta("overwrite")) == 0
    assert runner.run(to_delta("overwrite")) == 0
    assert runner.run(to_delta("append")) == 0  # no txnVersion: not taken for a replay
    ids = sorted(row.id for row in spark.read.format("delta").load(str(target)).collect())
    assert ids == [2, 2, 3, 3]


def partitioned_job(
    source: Path, target: Path, write_options: dict[str, Any], *, for_each_batch: bool = False
) -> dict[str, Any]:
    """Events -> Parquet partitioned by ``d`` (ids below 3 in d=1, the rest in d=2), by
    overwriting."""
    job = batch_job(source, target, "overwrite")
    job["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] = (
        "SELECT id, IF(id < 3, 1, 2) AS d FROM e"
    )
    job["spec"]["pipeline"]["outputs"][0]["options"] = {
        "saveMode": "overwrite",
        "partitionBy": ["d"],
        **write_options,
    }
    if for_each_batch:
        pipeline = job["spec"]["pipeline"]
        del pipeline["batchMode"]
        pipeline["streaming"] = {"triggerMode": "AvailableNow", "forEachBatchMode": True}
    return job


def ids_by_partition(spark: SparkSession, target: Path) -> dict[int, list[int]]:
    rows = spark.read.parquet(str(target)).collect()
    return {d: sorted(row.id for row in rows if row.d == d) for d in sorted({r.d for r in rows})}


@pytest.mark.parametrize(
    ("write_options", "session_mode", "kept"),
    [
        ({"partitionOverwriteMode": "dynamic"}, "static", {1: [0, 1, 2], 2: [10, 11]}),
        ({"PARTITIONOVERWRITEMODE": "Dynamic"}, "static", {1: [0, 1, 2], 2: [10, 11]}),
        ({"partitionOverwriteMode": "static"}, "dynamic", {2: [10, 11]}),
        ({}, "dynamic", {1: [0, 1, 2], 2: [10, 11]}),
        ({}, "static", {2: [10, 11]}),
    ],
    ids=["option-dynamic", "option-any-case", "option-over-session", "session-dynamic", "static"],
)
def test_an_overwrite_keeps_the_partitions_spark_keeps(
    runner: PipelineRunner,
    spark: SparkSession,
    tmp_path: Path,
    write_options: dict[str, str],
    session_mode: str,
    kept: dict[int, list[int]],
) -> None:
    first, second, target = tmp_path / "first", tmp_path / "second", tmp_path / "out"
    write_events(first, "a.json", events(0, 6))
    write_events(second, "b.json", events(10, 2))  # only d=2
    assert runner.run(partitioned_job(first, target, {})) == 0
    assert ids_by_partition(spark, target) == {1: [0, 1, 2], 2: [3, 4, 5]}
    directory = target.stat().st_ino
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", session_mode)
    try:
        assert runner.run(partitioned_job(second, target, write_options)) == 0
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert ids_by_partition(spark, target) == kept
    assert target.stat().st_ino == directory  # a sandboxed job may not replace it


def test_for_each_batch_mode_overwrites_partitions_dynamically_by_the_write_option(
    runner: PipelineRunner, spark: SparkSession, tmp_path: Path
) -> None:
    first, second, target = tmp_path / "first", tmp_path / "second", tmp_path / "out"
    write_events(first, "a.json", events(0, 6))
    write_events(second, "b.json", events(10, 2))
    assert runner.run(partitioned_job(first, target, {})) == 0
    job = partitioned_job(
        second, target, {"partitionOverwriteMode": "dynamic"}, for_each_batch=True
    )
    assert runner.run(job) == 0
    assert ids_by_partition(spark, target) == {1: [0, 1, 2], 2: [10, 11]}
