"""The upgrade commands through the real CLI against a real server whose drivers are fake:
``upgrade`` (checking only, not waiting, followed to success or to its rollback), ``get
upgrades``, ``describe upgrade`` with its diff, and ``describe job`` saying the job changed since
its application started; with their exit codes. A thread plays the runner and the supervisor
while a command follows an upgrade."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from streamjobs.cli import upgrade_commands
from streamjobs.domain.snapshots import SnapshotKind
from tests.cli.conftest import run
from tests.factories import changed, pipeline_manifest
from tests.staged_server import Stage, stage
from tests.staged_snapshots import ADMIN, job, run_until_running, stage_snapshot

__all__ = ["job", "stage"]

pytestmark = pytest.mark.snapshots

SQL = "spec.pipeline.steps[0].sequence[0].sql"
FILTERED = "SELECT * FROM ticks WHERE value % 2 = 0"


@pytest.fixture
def cli(stage: Stage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", stage.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", stage.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    monkeypatch.setattr(upgrade_commands, "POLL_SECONDS", 0.05)
    return CliRunner()


def configure(stage: Stage, job: str, *changes: tuple[str, Any]) -> None:
    manifest = changed(pipeline_manifest(job), *changes)
    stage.api.put(f"/api/v1/jobs/{job}", json=manifest).raise_for_status()


def carried_out(stage: Stage, job: str, *, fails: bool) -> threading.Thread:
    """A thread that, once the job's upgrade is asked for, plays the runner (the upgrade
    snapshot at the stop, the new driver's report) and ticks the supervisor; with ``fails``,
    the new driver fails instead of reporting."""
    upgrades = stage.services.upgrades
    assert upgrades is not None

    def work() -> None:
        deadline = time.monotonic() + 60
        while not upgrades.list(job, actor=ADMIN) and time.monotonic() < deadline:
            time.sleep(0.02)
        (asked,) = upgrades.list(job, actor=ADMIN)
        stage.tick()
        stage_snapshot(stage, asked.snapshot_name or "", kind=SnapshotKind.UPGRADE)
        stage.tick()  # the new spec starts
        stage.tick()  # its driver is submitted
        started = upgrades.get(job, asked.id, actor=ADMIN)
        if fails:
            stage.launcher.exit(-1, 1)
        else:
            stage.report(started.to_application_id or "", [{"type": "heartbeat", "sequence": 0}])
        stage.tick()

    thread = threading.Thread(target=work, name=f"upgrade-{job}", daemon=True)
    thread.start()
    return thread


def test_a_dry_run_shows_the_check_and_fails_when_the_spec_does_not_fit(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED))

    fits = run(cli, "upgrade", job, "--dry-run")

    assert fits.exit_code == 0, fits.output
    assert "Check (last-state): the new spec fits" in fits.stdout
    configure(stage, job, ("spec.pipeline.outputs[0].path", f"/tmp/out/{job}/elsewhere"))
    refused = run(cli, "upgrade", job, "--dry-run", "--mode", "snapshot")
    assert refused.exit_code == 1, refused.output
    assert "Check (snapshot): the new spec does NOT fit" in refused.stdout
    assert "refused  spec.pipeline.outputs[0].path" in refused.stdout
    upgraded = run(cli, "upgrade", job)
    assert upgraded.exit_code == 1
    assert "spec.pipeline.outputs[0].path" in upgraded.output


def test_upgrade_without_waiting_returns_once_the_application_stops(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED))
    described = run(cli, "describe", "job", job)
    assert f"Changed:        since running: {job}-1 runs version 1" in described.stdout

    upgraded = run(cli, "upgrade", job, "--no-wait", "--mode", "stateless")

    assert upgraded.exit_code == 0, upgraded.output
    assert "requested (stateless): STOPPING" in upgraded.stdout
    listed = json.loads(run(cli, "get", "upgrades", job, "-o", "json").stdout)["items"]
    assert [(item["mode"], item["status"]) for item in listed] == [("stateless", "STOPPING")]
    again = run(cli, "upgrade", job)
    assert again.exit_code == 1
    assert "has an upgrade in progress" in again.output


def test_upgrade_follows_it_until_it_succeeds(cli: CliRunner, stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED), ("spec.upgrade", {"rollbackWithinSeconds": 0}))
    worker = carried_out(stage, job, fails=False)

    upgraded = run(cli, "upgrade", job, "--timeout", "60")

    worker.join()
    assert upgraded.exit_code == 0, upgraded.output
    assert "STARTING" in upgraded.stdout
    assert "SUCCEEDED" in upgraded.stdout
    (item,) = json.loads(run(cli, "get", "upgrades", job, "-o", "json").stdout)["items"]
    table = run(cli, "get", "upgrades", job)
    assert item["id"] in table.stdout
    assert "1 -> 2" in table.stdout
    described = run(cli, "describe", "upgrade", job, item["id"])
    assert described.exit_code == 0, described.output
    assert "Status:         SUCCEEDED" in described.stdout
    assert "Versions:       1 -> 2" in described.stdout
    assert "  --- job version 1" in described.stdout
    assert f"  +        sql: {FILTERED}" in described.stdout
    assert "Changed:" not in run(cli, "describe", "job", job).stdout


def test_upgrade_fails_when_the_new_spec_was_rolled_back(
    cli: CliRunner, stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED))
    worker = carried_out(stage, job, fails=True)

    upgraded = run(cli, "upgrade", job, "--mode", "snapshot", "--timeout", "60")

    worker.join()
    assert upgraded.exit_code == 1, upgraded.output
    assert "ROLLED_BACK" in upgraded.output
    assert "failed" in upgraded.output
    (item,) = json.loads(run(cli, "get", "upgrades", job, "-o", "json").stdout)["items"]
    described = run(cli, "describe", "upgrade", job, item["id"])
    assert "Versions:       1 -> 2 (rolled back as 3)" in described.stdout
    assert "Rollback:       " in described.stdout


def test_describing_an_unknown_upgrade_fails(cli: CliRunner, stage: Stage, job: str) -> None:
    described = run(cli, "describe", "upgrade", job, "upg-000000000000")
    assert described.exit_code == 1
    assert "does not exist" in described.output
