"""The application commands against a real server whose drivers are fake: run, get apps,
describe app, events, logs, stop, resume and abort, and their exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.factories import pipeline_manifest
from tests.staged_server import Stage, stage

__all__ = ["stage"]


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def test_run_list_describe_events_logs_stop(cli: CliRunner, stage: Stage) -> None:
    started = run(cli, "run", "ticks")
    assert started.exit_code == 0, started.output
    assert "(ticks-1) started" in started.output
    application_id = started.output.split()[0].removeprefix("application/")
    stage.tick()
    stage.report(application_id, [{"type": "heartbeat", "sequence": 0}])
    stage.tick()

    listed = run(cli, "get", "apps", "ticks")
    assert listed.exit_code == 0, listed.output
    assert "ticks-1" in listed.output
    assert "Running" in listed.output

    jobs = run(cli, "get", "jobs")
    assert "Running" in jobs.output
    assert "IN ROWS/S" in jobs.output
    assert "Latest run:     ticks-1" in run(cli, "describe", "job", "ticks").output

    described = run(cli, "describe", "app", application_id)
    assert described.exit_code == 0, described.output
    assert "State:           Running" in described.output
    assert "driver-running" in described.output

    log = Path(stage.launcher.drivers[-1].handle.directory) / "stderr.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("starting\nbatch 0 committed\n")
    logs = run(cli, "logs", application_id, "--tail", "1")
    assert logs.output == "batch 0 committed\n"

    second = run(cli, "run", "ticks")
    assert second.exit_code == 1
    assert "ticks-1" in second.output

    assert run(cli, "stop", "ticks").exit_code == 0
    stage.tick()
    stage.tick()
    events = run(cli, "events", application_id)
    kinds = [line.split()[1] for line in events.output.splitlines()[1:] if line.split()]
    assert "stopped" in kinds  # then the stop's snapshot, which this fake driver never stages

    followed = run(cli, "logs", application_id, "-f")
    assert followed.exit_code == 0  # ends by itself: the application is terminal
    assert "batch 0 committed" in followed.output


def test_abort_and_the_errors_of_the_commands(cli: CliRunner, stage: Stage) -> None:
    started = run(cli, "run", "ticks")
    application_id = started.output.split()[0].removeprefix("application/")
    aborted = run(cli, "abort", application_id)
    assert aborted.exit_code == 0, aborted.output
    assert "terminating" in aborted.output
    stage.tick()
    again = run(cli, "abort", application_id)
    assert again.exit_code == 1
    assert "cannot take an abort" in again.output
    assert run(cli, "resume", "ticks").exit_code == 1
    assert run(cli, "run", "no-such-job").exit_code == 1
    assert run(cli, "describe", "app", "app-000").exit_code == 1


def test_describe_says_when_a_restart_is_due_and_when_its_held_queries_start(
    cli: CliRunner, stage: Stage
) -> None:
    job = pipeline_manifest(
        "restarts", restartPolicy={"type": "Always", "onFailureRetryInterval": 10}
    )
    stage.api.put("/api/v1/jobs/restarts", json=job).raise_for_status()
    application_id = run(cli, "run", "restarts").output.split()[0].removeprefix("application/")
    stage.tick()
    stage.report(application_id, [{"type": "heartbeat", "sequence": 0}])
    stage.tick()
    assert "Next attempt:" not in run(cli, "describe", "app", application_id).output
    stage.services.clock.advance(1)  # type: ignore[attr-defined]
    stage.launcher.exit(-1, 137)
    stage.tick()
    due = "2026-01-01T00:00:11+00:00"
    assert f"Next attempt:    {due}" in run(cli, "describe", "app", application_id).output
    stage.tick()  # submitted the lead early: its driver holds the queries until then
    described = run(cli, "describe", "app", application_id).output
    assert "State:           Starting" in described
    assert f"Queries start:   {due}" in described
    assert "its queries start at 00:00:11 UTC" in described
