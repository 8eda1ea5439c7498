"""``streamjobs run -q`` and ``streamjobs wait``, what the README's tour scripts with, against a
real server whose drivers are fake and whose supervisor the test ticks."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from streamjobs.cli.failures import EXIT_FAILED, EXIT_INVALID_INPUT
from tests.cli.conftest import run
from tests.staged_server import Stage, stage

__all__ = ["stage"]


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def started(cli: CliRunner) -> str:
    quiet = run(cli, "run", "ticks", "-q")
    assert quiet.exit_code == 0, quiet.output
    return quiet.stdout.strip()


def test_run_quiet_prints_the_id_only(cli: CliRunner, stage: Stage) -> None:
    application_id = started(cli)

    described = run(cli, "describe", "app", application_id)

    assert described.exit_code == 0, described.output
    assert f"ID:              {application_id}" in described.stdout


def test_wait_returns_once_the_state_is_reached(cli: CliRunner, stage: Stage) -> None:
    application_id = started(cli)

    assert run(cli, "wait", application_id, "--for", "Starting").exit_code == 0
    stage.tick()
    stage.report(application_id, [{"type": "heartbeat", "sequence": 0}])
    stage.tick()
    for spelling in ("Running", "RUNNING", "running"):
        waited = run(cli, "wait", application_id, "--for", spelling)
        assert waited.exit_code == 0, waited.output
        assert waited.stdout.strip() == f"application/{application_id} Running"


def test_wait_gives_up_when_the_time_runs_out(cli: CliRunner, stage: Stage) -> None:
    application_id = started(cli)

    waited = run(cli, "wait", application_id, "--for", "Running", "--timeout", "0")

    assert waited.exit_code == EXIT_FAILED
    assert "still Starting after 0 s, not Running" in waited.stderr


def test_wait_fails_when_the_application_ends_otherwise(cli: CliRunner, stage: Stage) -> None:
    application_id = started(cli)
    assert run(cli, "abort", application_id).exit_code == 0
    for _ in range(5):
        stage.tick()

    waited = run(cli, "wait", application_id, "--for", "Running", "--timeout", "60")

    assert waited.exit_code == EXIT_FAILED
    assert "ended Aborted; it will never be Running" in waited.stderr


def test_wait_refuses_a_state_that_does_not_exist(cli: CliRunner, stage: Stage) -> None:
    application_id = started(cli)

    waited = run(cli, "wait", application_id, "--for", "Sleeping")

    assert waited.exit_code == EXIT_INVALID_INPUT
    assert "'Sleeping' is not a state" in waited.stderr
    assert "Pending Rerun" in waited.stderr


def test_wait_for_an_unknown_application_fails(cli: CliRunner, stage: Stage) -> None:
    waited = run(cli, "wait", "no-such-application", "--for", "Running")

    assert waited.exit_code != 0
    assert "not" in waited.stderr.lower()
