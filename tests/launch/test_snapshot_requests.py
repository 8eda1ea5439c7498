"""What the launcher writes for a pipeline's runner when a snapshot is asked of it: the request in
the stop file (a graceful stop's aligned snapshot) or in ``snapshot-request``, whole and readable
by the driver's account; nothing for other programs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from streamjobs.domain.snapshots import (
    SNAPSHOT_REQUEST_FILE,
    SnapshotKind,
    SnapshotRequest,
    parse_request,
)
from streamjobs.launch.attempt_directory import MANIFEST_FILE, STOP_FILE
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.local import LocalLauncher

pytestmark = pytest.mark.snapshots


def attempt_directory(tmp_path: Path, application_type: str) -> DriverHandle:
    directory = tmp_path / "attempt"
    directory.mkdir()
    manifest = {"spec": {"application": {"type": application_type}}}
    (directory / MANIFEST_FILE).write_text(yaml.safe_dump(manifest), encoding="utf-8")
    # a pid no process has: nothing may be signalled by these tests
    return DriverHandle(
        pid=2**22 + 1, started_at=0.0, directory=str(directory), ui_port=0, master=""
    )


def written(path: Path) -> SnapshotRequest:
    return SnapshotRequest.model_validate_json(path.read_text(encoding="utf-8"))


def test_a_stop_with_a_snapshot_writes_the_request_into_the_stop_file(tmp_path: Path) -> None:
    handle = attempt_directory(tmp_path, "pipeline")
    request = SnapshotRequest(name="suspend-20261127-013000", kind=SnapshotKind.SUSPEND)
    LocalLauncher().stop(handle, snapshot=request)
    LocalLauncher().stop(handle, snapshot=request)  # every tick asks again: the same file
    stop_file = Path(handle.directory) / STOP_FILE
    assert written(stop_file) == request
    assert stat.S_IMODE(stop_file.stat().st_mode) == 0o644
    assert sorted(path.name for path in Path(handle.directory).iterdir()) == [
        MANIFEST_FILE,
        STOP_FILE,
    ]


def test_a_plain_stop_leaves_the_stop_file_empty(tmp_path: Path) -> None:
    handle = attempt_directory(tmp_path, "pipeline")
    LocalLauncher().stop(handle)
    stop_file = Path(handle.directory) / STOP_FILE
    assert stop_file.read_text(encoding="utf-8") == ""
    assert parse_request("") is None


def test_a_snapshot_asked_now_is_written_where_the_runner_looks(tmp_path: Path) -> None:
    handle = attempt_directory(tmp_path, "pipeline")
    LocalLauncher().request_snapshot(handle, SnapshotRequest(name="nightly"))
    assert written(Path(handle.directory) / SNAPSHOT_REQUEST_FILE) == SnapshotRequest(
        name="nightly"
    )
    assert not (Path(handle.directory) / STOP_FILE).exists()


def test_a_program_is_asked_for_no_snapshot(tmp_path: Path) -> None:
    handle = attempt_directory(tmp_path, "python")
    LocalLauncher().request_snapshot(handle, SnapshotRequest(name="nightly"))
    assert not (Path(handle.directory) / SNAPSHOT_REQUEST_FILE).exists()


def test_asking_a_driver_whose_directory_is_gone_is_harmless(tmp_path: Path) -> None:
    handle = attempt_directory(tmp_path, "pipeline")
    gone = DriverHandle(
        pid=handle.pid,
        started_at=0.0,
        directory=str(tmp_path / "gone"),
        ui_port=0,
        master="",
    )
    LocalLauncher().request_snapshot(gone, SnapshotRequest(name="nightly"))
    assert not (tmp_path / "gone").exists()
