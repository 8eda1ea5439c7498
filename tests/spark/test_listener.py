"""The runner's query listener on a real session: Spark's own progress reports, whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql.streaming.listener import QueryProgressEvent

from streamjobs.domain.clock import SystemClock
from streamjobs.runner.listener import ReportingListener
from tests.spark.conftest import CollectingReporter

pytestmark = pytest.mark.spark


class BridgedOnly(ReportingListener):
    """Counts the progress events PySpark converted itself, which the bridge should replace."""

    converted_by_pyspark = 0

    def onQueryProgress(self, event: QueryProgressEvent) -> None:  # noqa: N802 - Spark's name
        self.converted_by_pyspark += 1
        super().onQueryProgress(event)


def json_files(directory: Path, files: int, rows: int) -> Path:
    directory.mkdir()
    for index in range(files):
        lines = (json.dumps({"n": index * rows + row}) for row in range(rows))
        (directory / f"part-{index}.json").write_text("\n".join(lines) + "\n")
    return directory


def test_progress_events_carry_sparks_reports_with_observed_metrics(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = json_files(tmp_path / "in", files=3, rows=10)
    reporter = CollectingReporter()
    listener = BridgedOnly(reporter, clock=SystemClock(), application_id="app-1")
    spark.streams.addListener(listener)
    try:
        frame = (
            spark.readStream.schema("n BIGINT")
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
            .observe("counted", F.count(F.lit(1)).alias("rows"))
        )
        query = (
            frame.writeStream.format("noop")
            .queryName("listened")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        assert listener.await_terminated([str(query.id)])
        expected = [json.loads(progress.json) for progress in query.recentProgress]
    finally:
        spark.streams.removeListener(listener)

    kinds = [event["type"] for event in reporter.events]
    assert kinds == ["started", "progress", "progress", "progress", "terminated"]
    reported = [event["progress"] for event in reporter.events if event["type"] == "progress"]
    assert reported == expected
    assert [progress["observedMetrics"]["counted"]["rows"] for progress in reported] == [10] * 3
    assert {event["name"] for event in reporter.events} == {"listened"}
    assert {event["applicationId"] for event in reporter.events} == {"app-1"}
    assert listener.converted_by_pyspark == 0


def test_a_removed_listener_hears_nothing_more(spark: SparkSession, tmp_path: Path) -> None:
    removed, kept = CollectingReporter(), CollectingReporter()
    removed_listener = ReportingListener(removed, clock=SystemClock())
    kept_listener = ReportingListener(kept, clock=SystemClock())
    spark.streams.addListener(removed_listener)
    spark.streams.addListener(kept_listener)
    spark.streams.removeListener(removed_listener)
    try:
        query = (
            spark.readStream.schema("n BIGINT")
            .json(str(json_files(tmp_path / "in", files=1, rows=5)))
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        assert kept_listener.await_terminated([str(query.id)])
    finally:
        spark.streams.removeListener(kept_listener)
    assert [event["type"] for event in kept.events] == ["started", "progress", "terminated"]
    assert removed.events == []
