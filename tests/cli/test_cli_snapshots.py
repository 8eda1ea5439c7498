"""The snapshot commands through the real CLI against a real server whose drivers are fake:
``snapshot`` (waiting, not waiting, failing, timing out), ``get snapshots``, ``describe
snapshot``, ``delete snapshot``, ``suspend`` and ``run --from-snapshot``, with their exit codes.
The test plays the runner: it stages each snapshot, and ticks the supervisor to collect it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from streamjobs.cli import snapshot_commands
from streamjobs.domain.snapshots import SnapshotKind
from tests.cli.conftest import run
from tests.staged_server import Stage, stage
from tests.staged_snapshots import (
    OUTPUT,
    collected_when_asked,
    job,
    run_until_running,
    stage_snapshot,
)

__all__ = ["job", "stage"]

pytestmark = pytest.mark.snapshots


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    monkeypatch.setattr(snapshot_commands, "POLL_SECONDS", 0.05)
    return CliRunner()


def test_snapshot_waits_until_ready_then_lists_and_describes_it(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    application_id = run_until_running(stage, job)
    collector = collected_when_asked(stage, job, "nightly")

    taken = run(cli, "snapshot", job, "--name", "nightly")

    collector.join()
    assert taken.exit_code == 0, taken.output
    assert f"snapshot/{job}/nightly requested" in taken.stdout
    assert f"snapshot/{job}/nightly ready (" in taken.stdout

    listed = run(cli, "get", "snapshots", job)
    assert listed.exit_code == 0, listed.output
    assert "nightly" in listed.stdout
    assert "READY" in listed.stdout
    assert f"{OUTPUT}=1" in listed.stdout

    described = run(cli, "describe", "snapshot", job, "nightly")
    assert described.exit_code == 0, described.output
    assert "Status:         READY" in described.stdout
    assert f"Application:    {application_id}" in described.stdout
    assert f"  {OUTPUT}: batch 1" in described.stdout
    assert f"  {OUTPUT}: parquet sink log batch 1" in described.stdout

    as_json = json.loads(run(cli, "get", "snapshots", job, "-o", "json").stdout)
    assert [item["name"] for item in as_json["items"]] == ["nightly"]
    one = yaml.safe_load(run(cli, "get", "snapshots", job, "nightly", "-o", "yaml").stdout)
    assert one["positions"][0]["description"] == "parquet sink log batch 1"


def test_snapshot_fails_when_the_runner_could_not_take_it(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    collector = collected_when_asked(stage, job, "doomed", error="no space left on device")

    taken = run(cli, "snapshot", job, "--name", "doomed")

    collector.join()
    assert taken.exit_code == 1, taken.output
    assert f"snapshot/{job}/doomed failed" in taken.stderr
    assert "no space left on device" in taken.stderr
    described = run(cli, "describe", "snapshot", job, "doomed").stdout
    assert "Status:         FAILED" in described
    assert "Error:          " in described


def test_no_wait_returns_at_once_and_a_timeout_fails(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    run_until_running(stage, job)

    requested = run(cli, "snapshot", job, "--name", "later", "--no-wait")
    assert requested.exit_code == 0, requested.output
    assert requested.stdout.strip() == f"snapshot/{job}/later requested"
    assert "TAKING" in run(cli, "get", "snapshots", job).stdout

    timed_out = run(cli, "snapshot", job, "--name", "slow", "--timeout", "0")
    assert timed_out.exit_code == 1, timed_out.output
    assert "still being taken after 0 s" in timed_out.stderr


def test_the_refusals_and_their_exit_codes(cli: CliRunner, stage: Stage, job: str) -> None:
    not_running = run(cli, "snapshot", job)
    assert not_running.exit_code == 1, not_running.output
    assert "error:" in not_running.stderr

    run_until_running(stage, job)
    bad_name = run(cli, "snapshot", job, "--name", "no spaces", "--no-wait")
    assert bad_name.exit_code == 2, bad_name.output
    assert "name" in bad_name.stderr

    assert run(cli, "describe", "snapshot", job, "nope").exit_code == 1
    assert run(cli, "delete", "snapshot", job, "nope").exit_code == 1
    assert run(cli, "get", "snapshots", "no-such-job").exit_code == 1
    assert run(cli, "run", job, "--from-snapshot", "not a name").exit_code == 2


def test_delete_snapshot(cli: CliRunner, stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    assert run(cli, "snapshot", job, "--name", "old", "--no-wait").exit_code == 0
    busy = run(cli, "delete", "snapshot", job, "old")
    assert busy.exit_code == 1, busy.output
    stage.tick()
    stage_snapshot(stage, "old")
    stage.tick()

    deleted = run(cli, "delete", "snapshot", job, "old")

    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout.strip() == f"snapshot/{job}/old deleted"
    assert "old" not in run(cli, "get", "snapshots", job).stdout


def test_suspend_resume_stop_then_run_from_a_snapshot(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    application_id = run_until_running(stage, job)

    suspended = run(cli, "suspend", job)

    assert suspended.exit_code == 0, suspended.output
    assert suspended.stdout.strip() == f"application/{application_id} terminating"
    stage.tick()
    aligned = stage.launcher.drivers[-1].stop_snapshot
    assert aligned is not None
    stage_snapshot(stage, aligned.name, kind=SnapshotKind.SUSPEND, batch=3)
    stage.tick()
    assert aligned.name in run(cli, "get", "snapshots", job).stdout
    assert run(cli, "suspend", job).exit_code == 1

    assert run(cli, "resume", job).exit_code == 0
    assert run(cli, "stop", job).exit_code == 0
    stage.tick()
    stage.tick()
    assert run(cli, "run", job, "--from-snapshot", "nope").exit_code == 1

    started = run(cli, "run", job, "--from-snapshot", aligned.name)

    assert started.exit_code == 0, started.output
    assert f"started from snapshot {aligned.name}" in started.stdout
