"""A standby's runner in the shared session: it warms up and says it is ready without reading,
writing or reporting anything of the job, then runs from its promotion's ``startAt``; a stop
before the promotion ends it having started no query."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from streamjobs.domain.clock import FakeClock, SystemClock
from streamjobs.runner import standby
from streamjobs.runner.__main__ import parse_args
from streamjobs.runner.main import RunRequest, run
from tests.spark.conftest import CollectingReporter
from tests.spark.test_held_start import reporting_request


def standby_request(tmp_path: Path, *, stop_file: Path | None = None) -> RunRequest:
    return replace(
        reporting_request(tmp_path),
        application_id="app-standby",
        stop_file=str(stop_file) if stop_file else None,
        standby_promote_file=str(tmp_path / "promote.json"),
        standby_ready_file=str(tmp_path / "standby-ready.json"),
    )


@pytest.mark.spark
@pytest.mark.usefixtures("spark")
def test_a_standby_is_ready_untouched_and_runs_from_its_promotion(tmp_path: Path) -> None:
    reporter = CollectingReporter()
    request = standby_request(tmp_path)
    seen_while_held: dict[str, object] = {}
    promoted_for: list[datetime] = []

    def promote_once_ready() -> None:
        ready = Path(str(request.standby_ready_file))
        while not ready.exists():
            threading.Event().wait(0.1)
        seen_while_held["ready"] = json.loads(ready.read_text())
        seen_while_held["events"] = list(reporter.events)
        seen_while_held["written"] = (tmp_path / "out").exists()
        seen_while_held["checkpoint"] = (tmp_path / "checkpoints").exists()
        start_at = SystemClock().now() + timedelta(seconds=1)
        promoted_for.append(start_at)
        promotion = tmp_path / ".promote.json.tmp"
        promotion.write_text(json.dumps({"startAt": start_at.isoformat()}))
        promotion.replace(str(request.standby_promote_file))

    promoter = threading.Thread(target=promote_once_ready, daemon=True)
    promoter.start()
    assert run(request, reporter=reporter) == 0
    promoter.join(timeout=5)

    assert "readyAt" in seen_while_held.pop("ready")  # type: ignore[operator]
    assert seen_while_held == {"events": [], "written": False, "checkpoint": False}
    assert reporter.events[0]["type"] == "driver"
    reported = [datetime.fromisoformat(event["timestamp"]) for event in reporter.events]
    assert min(reported) >= promoted_for[0]
    assert {e.get("name") for e in reporter.of_type("started")} == {"held/e"}
    assert list((tmp_path / "out").glob("*.json"))


@pytest.mark.spark
@pytest.mark.usefixtures("spark")
def test_a_standby_stopped_before_its_promotion_starts_no_query(tmp_path: Path) -> None:
    stop_file = tmp_path / "stop"
    stop_file.touch()
    reporter = CollectingReporter()
    assert run(standby_request(tmp_path, stop_file=stop_file), reporter=reporter) == 0
    assert reporter.events == []
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "checkpoints").exists()


def test_an_unreadable_promotion_starts_the_run_now(tmp_path: Path) -> None:
    clock = FakeClock(datetime.fromisoformat("2030-01-02T03:04:05+00:00"))
    promotion = tmp_path / "promote.json"
    promotion.write_text("not json")
    errors = io.StringIO()
    start_at = standby.await_promotion(promotion, stopped=lambda: False, clock=clock, errors=errors)
    assert start_at == clock.now()
    assert "unreadable" in errors.getvalue()
    promotion.write_text(json.dumps({"startAt": "2030-01-02T03:04:09+00:00"}))
    assert standby.await_promotion(
        promotion, stopped=lambda: False, clock=clock, errors=errors
    ) == clock.now() + timedelta(seconds=4)
    assert (
        standby.await_promotion(tmp_path / "none", stopped=lambda: True, clock=clock, errors=errors)
        is None
    )


def test_a_standby_needs_both_of_its_files() -> None:
    with pytest.raises(SystemExit):
        parse_args(["--manifest", "job.yaml", "--standby-promote-file", "promote.json"])
    request = parse_args(
        ["--manifest", "job.yaml", "--standby-promote-file", "p", "--standby-ready-file", "r"]
    )
    assert (request.standby_promote_file, request.standby_ready_file) == ("p", "r")
