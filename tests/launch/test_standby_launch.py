"""A warm standby's driver under the real local launcher: held ready without touching the job's
data, promoted to run from a given time, or stopped before that having started nothing."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from streamjobs.launch.attempt_directory import PROMOTE_FILE, standby_ready_path
from streamjobs.launch.base import DriverHandle, DriverState, InvalidLaunch
from streamjobs.launch.cluster import ClusterDrivers
from streamjobs.launch.command import runner_arguments
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.logs import tail_lines
from tests.launch.conftest import TOOLCHAIN, Drivers, attempt_for, launch_sandbox, wait_until
from tests.launch.test_local_launcher import PIPELINE_DRIVER, parquet_files, ticks_to_parquet


def standby_ticks(tmp_path: Path) -> dict[str, Any]:
    manifest = ticks_to_parquet(tmp_path, "standby")
    manifest["spec"]["instance"] = {"standby": True}
    return manifest


def commit_files(checkpoint: Path) -> list[Path]:
    return sorted(checkpoint.rglob("commits/[0-9]*"))


def start_standby(drivers: Drivers, launcher: LocalLauncher, tmp_path: Path) -> DriverHandle:
    """Submit the ticks pipeline as a standby and return once it says it is ready."""
    attempt = attempt_for(
        standby_ticks(tmp_path), tmp_path / "attempt", driver=PIPELINE_DRIVER, standby=True
    )
    handle = drivers.submit(launcher, attempt)
    assert not launcher.standby_ready(handle)

    def ready() -> bool:
        if launcher.poll(handle).state is DriverState.EXITED:
            log = "\n".join(tail_lines(Path(handle.directory) / "stderr.log", 40))
            pytest.fail(f"the standby exited before it was ready; its log ends:\n{log}")
        return launcher.standby_ready(handle)

    wait_until(ready, timeout=180, what="the standby to say it is ready")
    return handle


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_standby_holds_no_data_until_promoted_then_runs_from_start_at(
    drivers: Drivers, tmp_path: Path
) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    handle = start_standby(drivers, launcher, tmp_path)
    ready = json.loads(standby_ready_path(Path(handle.directory)).read_text())
    assert datetime.fromisoformat(ready["readyAt"]).tzinfo is not None

    held_since = datetime.now(UTC)
    wait_until(
        lambda: datetime.now(UTC) > held_since + timedelta(seconds=2), what="two seconds held"
    )
    checkpoint = tmp_path / "checkpoint"
    assert not list(checkpoint.rglob("*"))  # no query's metadata, offsets or commits
    assert not list((tmp_path / "out").rglob("*"))
    assert launcher.poll(handle).state is DriverState.RUNNING

    start_at = datetime.now(UTC) + timedelta(seconds=3)
    launcher.promote(handle, start_at=start_at)
    launcher.promote(handle, start_at=start_at)  # asked again: harmless
    first = wait_until(lambda: commit_files(checkpoint), what="a committed micro-batch")[0]
    assert datetime.fromtimestamp(first.stat().st_mtime, UTC) >= start_at
    wait_until(lambda: parquet_files(tmp_path / "out"), what="parquet files")

    launcher.stop(handle)
    assert drivers.wait_exited(launcher, handle) == 0
    launcher.promote(handle, start_at=start_at)  # on a driver that is gone: harmless


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_standby_stopped_before_its_promotion_exits_0_having_started_no_query(
    drivers: Drivers, tmp_path: Path
) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    handle = start_standby(drivers, launcher, tmp_path)

    launcher.stop(handle)
    assert drivers.wait_exited(launcher, handle) == 0
    assert not list((tmp_path / "checkpoint").rglob("*"))  # the sandbox made it, empty
    assert not list((tmp_path / "out").rglob("*"))
    reports = (Path(handle.directory) / "stdout.log").read_text()
    assert '"started"' not in reports
    assert '"progress"' not in reports


def test_a_standby_runner_is_told_where_it_is_promoted_and_says_it_is_ready(
    tmp_path: Path,
) -> None:
    attempt = attempt_for(standby_ticks(tmp_path), tmp_path / "attempt", standby=True)
    arguments = runner_arguments(attempt)
    promote = arguments[arguments.index("--standby-promote-file") + 1]
    ready = arguments[arguments.index("--standby-ready-file") + 1]
    assert promote == str(tmp_path / "attempt" / PROMOTE_FILE)
    assert ready == str(standby_ready_path(tmp_path / "attempt"))
    plain = attempt_for(standby_ticks(tmp_path), tmp_path / "attempt")
    assert "--standby-promote-file" not in runner_arguments(plain)


def test_promote_writes_the_start_time_whole_and_ready_trusts_only_a_plain_file(
    tmp_path: Path,
) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN)
    directory = tmp_path / "attempt"
    (directory / "work").mkdir(parents=True)
    handle = DriverHandle(
        pid=1, started_at=0.0, directory=str(directory), ui_port=1, master="local[1]"
    )
    start_at = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    launcher.promote(handle, start_at=start_at)
    promotion = json.loads((directory / PROMOTE_FILE).read_text())
    assert datetime.fromisoformat(promotion["startAt"]) == start_at
    assert not list(directory.glob(".*.tmp"))

    assert not launcher.standby_ready(handle)
    os.symlink(directory / PROMOTE_FILE, standby_ready_path(directory))
    assert not launcher.standby_ready(handle)
    standby_ready_path(directory).unlink()
    standby_ready_path(directory).write_text('{"readyAt": "2030-01-02T03:04:05+00:00"}')
    assert launcher.standby_ready(handle)

    gone = DriverHandle(
        pid=1, started_at=0.0, directory=str(tmp_path / "gone"), ui_port=1, master="local[1]"
    )
    launcher.promote(gone, start_at=start_at)
    assert not launcher.standby_ready(gone)


def test_cluster_mode_refuses_a_standby(tmp_path: Path) -> None:
    manifest = standby_ticks(tmp_path)
    attempt = attempt_for(manifest, tmp_path / "attempt", standby=True)
    cluster = ClusterDrivers(
        master_url="spark://127.0.0.1:7077",
        rest_url="http://127.0.0.1:9",
        master_web_url="http://127.0.0.1:9",
        toolchain=lambda: TOOLCHAIN,
    )
    with pytest.raises(InvalidLaunch, match=r"spec\.instance\.standby"):
        cluster.submit(attempt)
