"""A restart's driver holds its queries until its retry interval ends (``--hold-until``): the
Spark session starts at once, the queries and every report only once the time has come, and a
stop asked meanwhile ends the run before anything is read or written."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from streamjobs.domain.clock import SystemClock
from streamjobs.runner.main import RunRequest, run
from tests.spark.conftest import CollectingReporter, PipelineRunner
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


def reporting_request(tmp_path: Path, hold_until: datetime | None = None) -> RunRequest:
    """A run that reports as under the server (heartbeats every 0.2 s), held until then."""
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(once_job(tmp_path)))
    token = tmp_path / "report-token"
    token.write_text("unused: the test hands the run its reporter")
    return RunRequest(
        manifest=str(manifest),
        checkpoint_root=(tmp_path / "checkpoints").as_uri(),
        application_id="app-held",
        report_url="http://127.0.0.1:9/unused",
        report_token_file=str(token),
        heartbeat_seconds=0.2,
        hold_until=hold_until,
    )


def test_heartbeats_start_with_the_queries_not_before(tmp_path: Path) -> None:
    hold_until = SystemClock().now() + timedelta(seconds=2)
    reporter = CollectingReporter()
    assert run(reporting_request(tmp_path, hold_until), reporter=reporter) == 0
    assert reporter.events[0]["type"] == "driver"
    assert all(datetime.fromisoformat(e["timestamp"]) >= hold_until for e in reporter.events)


@pytest.fixture
def sigterm_ignored_outside_the_run() -> Iterator[None]:
    """A SIGTERM that lands after the run restored the handlers does not end the tests."""
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("sigterm_ignored_outside_the_run")
def test_sigterm_during_the_hold_ends_the_run_before_any_query(tmp_path: Path) -> None:
    reporter = CollectingReporter()
    request = reporting_request(tmp_path, SystemClock().now() + timedelta(minutes=10))
    returned = threading.Event()

    def terminate_until_returned() -> None:  # one sent before the run listens is ignored
        while not returned.wait(1.0):
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate_until_returned, daemon=True).start()
    try:
        assert run(request, reporter=reporter) == 0
    finally:
        returned.set()
    assert reporter.events == []
    assert not (tmp_path / "out").exists()
