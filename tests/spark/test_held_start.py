"""A restart's driver holds its queries until its retry interval ends (``--hold-until``): the
Spark session starts at once, the queries and every report only once the time has come, and a
stop asked meanwhile ends the run before anything is read or written."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from streamjobs.domain.clock import SystemClock
from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import pipeline_job

pytestmark = pytest.mark.spark
SCHEMA = "id BIGINT"


def once_job(tmp_path: Path) -> dict[str, object]:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    return pipeline_job(
        "held",
        trigger={"triggerMode": "Once"},
        inputs=[{"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": SCHEMA}],
        outputs=[{"name": "e", "format": "json", "path": str(tmp_path / "out")}],
    )


def test_the_queries_and_the_reports_wait_for_the_hold(
    runner: PipelineRunner, tmp_path: Path
) -> None:
    hold_until = SystemClock().now() + timedelta(seconds=2)
    assert runner.run(once_job(tmp_path), hold_until=hold_until) == 0
    kinds = [event["type"] for event in runner.reporter.events]
    assert kinds[0] == "driver"
    assert "terminated" in kinds
    reported = [datetime.fromisoformat(event["timestamp"]) for event in runner.reporter.events]
    assert min(reported) >= hold_until
    assert list((tmp_path / "out").glob("*.json"))


def test_a_stop_during_the_hold_ends_the_run_before_any_query(
    runner: PipelineRunner, tmp_path: Path
) -> None:
    stop_file = tmp_path / "stop"
    stop_file.touch()
    hold_until = SystemClock().now() + timedelta(minutes=10)
    code = runner.run(once_job(tmp_path), hold_until=hold_until, stop_file=stop_file)
    assert code == 0
    assert runner.reporter.events == []
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "checkpoints").exists()
