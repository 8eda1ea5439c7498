"""What a failed run says on the command line: a Run refused for a missing secret exits non-zero
naming it, and ``describe app`` and ``events`` give the cause found in the driver's logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.factories import changed, python_manifest
from tests.staged_server import Stage, stage

__all__ = ["stage"]

TRACEBACK = """\
Traceback (most recent call last):
  File "/app/job.py", line 4, in <module>
    print(settings["x"])
          ~~~~~~~~^^^^^
KeyError: 'x'
"""


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def test_run_of_a_job_whose_secret_is_missing_exits_non_zero_naming_it(
    cli: CliRunner, stage: Stage
) -> None:
    job = changed(python_manifest("clicks"), ("spec.configuration.envSecrets", {"KEY": "api-key"}))
    stage.api.put("/api/v1/jobs/clicks", json=job).raise_for_status()
    refused = run(cli, "run", "clicks")
    assert refused.exit_code == 1, refused.output
    assert "job 'clicks' cannot run" in refused.output
    assert "spec.configuration.envSecrets.KEY" in refused.output
    assert "secret 'api-key' does not exist in resource bundle 'default'" in refused.output
    assert run(cli, "get", "apps", "clicks").output.count("clicks-") == 0


def test_describe_app_and_events_give_the_cause_from_the_drivers_log(
    cli: CliRunner, stage: Stage
) -> None:
    started = run(cli, "run", "ticks")
    assert started.exit_code == 0, started.output
    application_id = started.output.split()[0].removeprefix("application/")
    stage.tick()
    directory = Path(stage.launcher.drivers[-1].handle.directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "stdout.log").write_text(TRACEBACK)
    stage.launcher.exit(-1, 1)
    stage.tick()
    stage.tick()

    described = run(cli, "describe", "app", application_id)
    assert described.exit_code == 0, described.output
    assert "State:           Failed" in described.output
    assert "Error:           KeyError: 'x'" in described.output
    events = run(cli, "events", application_id).output
    assert "driver exited with code 1: KeyError: 'x'; failed to start; no retries" in events
