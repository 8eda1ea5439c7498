"""``streamjobs describe app`` with a standby driver: the "Standby driver" line while one is held
(starting or ready), none once it ended, and the attempts listing marking standbys, held or
promoted."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.staged_server import Stage, stage
from tests.standby_attempts import (
    STANDBY_PID,
    add_standby,
    end_attempt,
    promote,
    running_application,
)

__all__ = ["stage"]


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def described(cli: CliRunner, application_id: str) -> list[str]:
    result = run(cli, "describe", "app", application_id)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def attempt_line(lines: list[str], number: int) -> str:
    return next(line for line in lines if line.startswith(f"  #{number}  "))


def test_a_ready_standby_has_its_line_and_is_marked_among_the_attempts(
    cli: CliRunner, stage: Stage
) -> None:
    application_id = running_application(stage)
    held = add_standby(stage, application_id, ready=True)
    assert held.running_at is not None
    lines = described(cli, application_id)
    assert (
        f"Standby driver:  attempt 2, ready, pid {STANDBY_PID}, since "
        + (held.running_at.isoformat())
        in lines
    )
    assert attempt_line(lines, 2).endswith("  (standby)")
    assert "standby" not in attempt_line(lines, 1)


def test_a_starting_standby_is_shown_since_it_was_started(cli: CliRunner, stage: Stage) -> None:
    application_id = running_application(stage)
    held = add_standby(stage, application_id, ready=False)
    lines = described(cli, application_id)
    assert (
        f"Standby driver:  attempt 2, starting, pid {STANDBY_PID}, since "
        + (held.submitted_at.isoformat())
        in lines
    )


def test_an_ended_standby_has_no_line_but_stays_an_attempt(cli: CliRunner, stage: Stage) -> None:
    application_id = running_application(stage)
    assert not any(line.startswith("Standby") for line in described(cli, application_id))
    add_standby(stage, application_id, ready=True)
    end_attempt(stage, application_id, 2, outcome="discarded")
    lines = described(cli, application_id)
    assert not any(line.startswith("Standby") for line in lines)
    assert attempt_line(lines, 2).endswith("discarded  (standby)")


def test_a_promoted_standby_is_marked_with_when_it_was_promoted(
    cli: CliRunner, stage: Stage
) -> None:
    application_id = running_application(stage)
    add_standby(stage, application_id, ready=True)
    promoted_at = promote(stage, application_id, 2)
    lines = described(cli, application_id)
    assert not any(line.startswith("Standby") for line in lines)
    assert attempt_line(lines, 2).endswith(f"  (standby, promoted at {promoted_at.isoformat()})")
    assert attempt_line(lines, 1).endswith("restarted")
