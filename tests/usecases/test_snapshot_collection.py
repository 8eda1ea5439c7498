"""Collecting what a runner staged, on real files: a snapshot asked for becomes READY with the
batches and size of its copy, which moves into the snapshot root; a hostile staged snapshot
(a link out, a FIFO, a record too large or misnamed) is refused with nothing read through it;
periodic snapshots are kept up to ``snapshotsToKeep`` and manual ones until deleted."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from streamjobs.domain.snapshots import (
    MAX_RECORD_BYTES,
    SNAPSHOT_CHECKPOINT_DIRECTORY,
    SNAPSHOT_RECORD_FILE,
    SnapshotKind,
    SnapshotStatus,
)
from streamjobs.services.snapshot_files import Refused, check_tree, move_tree, read_record
from tests.usecases.snapshot_fixtures import (
    ADMIN,
    QUERY,
    World,
    delta_at,
    world,
)

__all__ = ["world"]

pytestmark = pytest.mark.snapshots


def events(world: World, application_id: str, kind: str) -> list[str]:
    found = world.services.applications.events(application_id, actor=ADMIN)
    return [event.message for event in found if event.kind == kind]


def snapshot_root_files(world: World) -> list[str]:
    """Every file under the snapshot root, relative to it."""
    return sorted(
        os.path.relpath(os.path.join(directory, name), world.snapshot_root)
        for directory, _, names in os.walk(world.snapshot_root)
        for name in names
    )


def test_a_requested_snapshot_becomes_ready_with_what_its_copy_holds(world: World) -> None:
    job = world.job()
    application = world.running(job)
    asked = world.snapshots.take(job, name="m1", actor=ADMIN)
    record = json.dumps(
        {
            "name": "m1",
            "kind": "manual",
            "takenAt": world.clock.now().isoformat(),
            "batches": {QUERY: 99, "invented": 5},
            "positions": [delta_at(4).to_wire()],
        }
    )
    staged = world.stage(application, "m1", batch=3, record=record)
    copied = staged / SNAPSHOT_CHECKPOINT_DIRECTORY
    size = sum(path.stat().st_size for path in copied.rglob("*") if path.is_file())
    [ready] = world.snapshots.collect(application.id)
    assert (ready.id, ready.status, ready.kind) == (asked.id, SnapshotStatus.READY, "manual")
    assert (ready.batches, ready.size_bytes) == ({QUERY: 3}, size)
    assert ready.positions == [delta_at(4)]
    assert ready.taken_at == world.clock.now()
    assert not staged.exists()
    kept = world.snapshot_root / str(ready.directory) / "checkpoint" / QUERY
    assert sorted(os.listdir(kept / "commits")) == ["0", "1", "2", "3"]
    assert oct(kept.stat().st_mode & 0o777) == oct(0o755)
    assert oct((kept / "metadata").stat().st_mode & 0o777) == oct(0o644)
    assert events(world, application.id, "snapshot-taken") == [
        f"snapshot m1 (manual) taken: batches {QUERY} 3, {size} bytes"
    ]
    assert world.snapshots.collect(application.id) == []
    assert [s.name for s in world.snapshots.list(job, actor=ADMIN)] == ["m1"]


def test_a_snapshot_the_runner_could_not_take_fails_with_its_reason(world: World) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="m1", actor=ADMIN)
    world.stage(application, "m1", error="the query failed while held")
    [failed] = world.snapshots.collect(application.id)
    assert (failed.status, failed.directory) == (SnapshotStatus.FAILED, None)
    assert failed.error == "the runner could not take it: the query failed while held"
    assert snapshot_root_files(world) == []


@pytest.mark.parametrize(
    ("plant", "reason"),
    [
        (
            lambda staged: (staged / "checkpoint" / QUERY / "offsets" / "3").symlink_to(
                "/etc/passwd"
            ),
            f"{QUERY}/offsets/3 is a symbolic link",
        ),
        (
            lambda staged: (staged / "checkpoint" / QUERY / "state").symlink_to("/etc"),
            f"{QUERY}/state is a symbolic link",
        ),
        (
            lambda staged: os.mkfifo(staged / "checkpoint" / QUERY / "commits" / "9"),
            f"{QUERY}/commits/9 is neither a regular file nor a directory",
        ),
        (
            lambda staged: _replace(staged / SNAPSHOT_RECORD_FILE, "/etc/passwd"),
            "snapshot.json is a symbolic link",
        ),
        (
            lambda staged: (staged / SNAPSHOT_RECORD_FILE).write_text(" " * (MAX_RECORD_BYTES + 1)),
            f"snapshot.json holds {MAX_RECORD_BYTES + 1} bytes, more than {MAX_RECORD_BYTES}",
        ),
        (
            lambda staged: (staged / SNAPSHOT_RECORD_FILE).write_text("{"),
            "its record does not parse",
        ),
        (
            lambda staged: _rename_in_record(staged, "other"),
            "its record is named 'other' but lies in the directory 'm1'",
        ),
    ],
    ids=["link-to-a-file", "link-to-a-directory", "fifo", "record-link", "huge", "bad", "named"],
)
def test_a_hostile_staged_snapshot_is_refused_and_nothing_is_kept(
    world: World, plant: object, reason: str
) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="m1", actor=ADMIN)
    staged = world.stage(application, "m1")
    plant(staged)  # type: ignore[operator]
    [failed] = world.snapshots.collect(application.id)
    assert failed.status is SnapshotStatus.FAILED
    assert failed.error is not None
    assert reason in failed.error, failed.error
    assert not os.path.lexists(staged)
    assert snapshot_root_files(world) == []
    assert Path("/etc/passwd").is_file()
    [message] = events(world, application.id, "snapshot-failed")
    assert message.startswith("snapshot m1: the staged snapshot was refused")


def test_a_staged_directory_that_is_a_link_is_refused_and_its_target_untouched(
    world: World, tmp_path: Path
) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="m1", actor=ADMIN)
    elsewhere = world.stage(application, "elsewhere").rename(tmp_path / "elsewhere")
    (world.apps / application.id / "1" / "snapshots" / "m1").symlink_to(elsewhere)
    (elsewhere / SNAPSHOT_RECORD_FILE).write_text(
        (elsewhere / SNAPSHOT_RECORD_FILE).read_text().replace("elsewhere", "m1")
    )
    [failed] = world.snapshots.collect(application.id)
    assert failed.error is not None
    assert "is a symbolic link" in failed.error
    assert (elsewhere / SNAPSHOT_CHECKPOINT_DIRECTORY / QUERY / "metadata").is_file()
    assert snapshot_root_files(world) == []


def test_a_record_naming_a_snapshot_badly_is_refused(world: World) -> None:
    job = world.job()
    application = world.running(job)
    staged = world.stage(application, "-bad")
    assert world.snapshots.collect(application.id) == []
    assert not staged.exists()
    [message] = events(world, application.id, "snapshot-failed")
    assert "is not a valid snapshot name" in message


def test_a_staged_snapshot_without_its_record_is_left_for_later(world: World) -> None:
    job = world.job()
    application = world.running(job)
    staged = world.stage(application, "m1")
    (staged / SNAPSHOT_RECORD_FILE).unlink()
    assert world.snapshots.collect(application.id) == []
    assert (staged / SNAPSHOT_CHECKPOINT_DIRECTORY).is_dir()


def test_periodic_snapshots_are_kept_up_to_the_retention_count(world: World) -> None:
    job = world.job(processing={"snapshotsToKeep": 2})
    application = world.running(job)
    world.snapshots.take(job, name="manual-keep", actor=ADMIN)
    world.stage(application, "manual-keep")
    world.snapshots.collect(application.id)
    directories = {}
    for number in range(4):
        world.clock.advance(60)
        name = f"periodic-{number}"
        world.stage(application, name, batch=number, kind=SnapshotKind.PERIODIC)
        [ready] = world.snapshots.collect(application.id)
        assert (ready.name, ready.kind, ready.status) == (name, "periodic", "READY")
        assert (ready.application_id, ready.spec_version) == (application.id, 1)
        directories[name] = world.snapshot_root / str(ready.directory)
    names = [s.name for s in world.snapshots.list(job, actor=ADMIN)]
    assert names == ["periodic-3", "periodic-2", "manual-keep"]
    assert [name for name, path in directories.items() if path.exists()] == [
        "periodic-2",
        "periodic-3",
    ]
    assert events(world, application.id, "snapshot-taken")[-1].endswith(
        "; retention deleted periodic-1"
    )


def test_a_staged_snapshot_whose_name_is_taken_is_dropped(world: World) -> None:
    job = world.job()
    first = world.running(job)
    world.stage(first, "nightly", kind=SnapshotKind.PERIODIC)
    [kept] = world.snapshots.collect(first.id)
    world.end(first)
    second = world.running(job)
    world.stage(second, "nightly", batch=7, kind=SnapshotKind.PERIODIC)
    assert world.snapshots.collect(second.id) == []
    assert world.snapshots.get(job, "nightly", actor=ADMIN) == kept
    assert events(world, second.id, "snapshot-failed") == [
        "snapshot nightly: a snapshot named nightly exists; this one is dropped"
    ]
    assert os.listdir(world.snapshot_root) == [kept.directory]


def test_a_snapshot_handed_over_after_it_expired_is_still_kept(world: World) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="late", actor=ADMIN)
    world.clock.advance(601)
    [expired] = world.snapshots.expire()
    world.stage(application, "late")
    [ready] = world.snapshots.collect(application.id)
    assert (ready.id, ready.status, ready.error) == (expired.id, SnapshotStatus.READY, None)


def test_check_tree_and_read_record_follow_no_link(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "q").mkdir(parents=True)
    (tree / "q" / "data").write_text("x" * 10)
    assert check_tree(tree).size_bytes == 10
    (tree / "q" / "link").symlink_to(tmp_path)
    with pytest.raises(Refused, match="q/link is a symbolic link"):
        check_tree(tree)
    (tmp_path / "record").symlink_to(tree / "q" / "data")
    with pytest.raises(Refused, match="record is a symbolic link"):
        read_record(tmp_path / "record")


def _replace(path: Path, target: str) -> None:
    path.unlink()
    path.symlink_to(target)


def _rename_in_record(staged: Path, name: str) -> None:
    record = json.loads((staged / SNAPSHOT_RECORD_FILE).read_text())
    (staged / SNAPSHOT_RECORD_FILE).write_text(json.dumps(record | {"name": name}))


def test_a_move_across_file_systems_copies_only_directories_and_regular_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def across(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "rename", across)
    plain = tmp_path / "plain"
    (plain / "q" / "commits").mkdir(parents=True)
    (plain / "q" / "commits" / "0").write_text("v1")
    move_tree(plain, tmp_path / "moved")
    assert (tmp_path / "moved" / "q" / "commits" / "0").read_text() == "v1"
    assert not plain.exists()
    hostile = tmp_path / "hostile"
    (hostile / "q").mkdir(parents=True)
    os.mkfifo(hostile / "q" / "pipe")
    with pytest.raises(Refused, match="neither a regular file nor a directory"):
        move_tree(hostile, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()
