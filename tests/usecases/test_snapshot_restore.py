"""Starting a job from a snapshot, on real files: refused when a Delta output went on past the
snapshot (a ``_delta_log`` written by hand) unless replay is allowed; the checkpoint swapped for
a copy of the snapshot, the one it replaced kept as a ``replaced`` snapshot; and nothing changed
when the swap cannot be made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.snapshots import SNAPSHOT_CHECKPOINT_DIRECTORY, SnapshotKind, SnapshotStatus
from streamjobs.services.snapshot_restore import OutputsAhead, RestoreResult
from streamjobs.store.snapshots import SnapshotRecord
from tests.usecases.snapshot_fixtures import (
    ADMIN,
    QUERY,
    World,
    world,
    write_checkpoint,
    write_delta_log,
)

__all__ = ["world"]

pytestmark = pytest.mark.snapshots


def taken(world: World, job: str, name: str, *, batch: int) -> SnapshotRecord:
    """A READY snapshot ``name`` of ``job`` at ``batch`` (its Delta output at version
    ``batch``), taken and collected from a running application that then stopped."""
    application = world.running(job)
    world.snapshots.take(job, name=name, actor=ADMIN)
    world.stage(application, name, batch=batch)
    [ready] = world.snapshots.collect(application.id)
    world.end(application)
    assert ready.status is SnapshotStatus.READY
    return ready


def restore(world: World, job: str, name: str, *, allow_replay: bool = False) -> RestoreResult:
    with world.services.store.transaction() as repos:
        return world.snapshots.restore(
            repos, job, name, allow_replay=allow_replay, actor=ADMIN, at=world.clock.now()
        )


def commits(checkpoint: Path) -> list[str]:
    return sorted(os.listdir(checkpoint / QUERY / "commits"), key=int)


def test_a_snapshot_older_than_a_delta_output_is_refused_unless_replay_is_allowed(
    world: World,
) -> None:
    job = world.job()
    taken(world, job, "at-2", batch=2)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 5)
    write_delta_log(world.output(job), 6)
    with pytest.raises(Conflict) as refused:
        restore(world, job, "at-2")
    assert refused.value.detail == (
        f"snapshot 'at-2' of job '{job}' is older than its outputs, which would be written "
        f"again from it: {QUERY}: the snapshot is at delta version 2 (batch 2), the output now "
        "at delta version 5 (batch 5). Start from it anyway only if the outputs may be replayed "
        "(allow replay)"
    )
    assert commits(checkpoint) == ["0", "1", "2", "3", "4", "5"]
    assert [s.name for s in world.snapshots.list(job, actor=ADMIN)] == ["at-2"]
    result = restore(world, job, "at-2", allow_replay=True)
    assert result.snapshot.name == "at-2"
    assert result.ahead == [
        f"{QUERY}: the snapshot is at delta version 2 (batch 2), "
        "the output now at delta version 5 (batch 5)"
    ]
    assert commits(checkpoint) == ["0", "1", "2"]


def test_a_stateful_query_whose_delta_output_is_ahead_is_refused_even_with_replay(
    world: World,
) -> None:
    """Delta skips the batches its writer committed without running them: a stateful query's
    state would miss them, and Spark fails at the next batch loading it."""
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="at-2", actor=ADMIN)
    staged = world.stage(application, "at-2", batch=2)
    (staged / SNAPSHOT_CHECKPOINT_DIRECTORY / QUERY / "state" / "0" / "0").mkdir(parents=True)
    world.snapshots.collect(application.id)
    world.end(application)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 5)
    write_delta_log(world.output(job), 6)

    with pytest.raises(OutputsAhead) as refused:
        restore(world, job, "at-2", allow_replay=True)

    assert not refused.value.replayable
    assert f"the stateful queries {QUERY} cannot replay" in refused.value.detail
    assert commits(checkpoint) == ["0", "1", "2", "3", "4", "5"]


def test_the_replaced_checkpoint_is_kept_as_a_snapshot(world: World) -> None:
    job = world.job()
    snapshot = taken(world, job, "at-2", batch=2)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 4)
    write_delta_log(world.output(job), 3)
    world.clock.advance(3600)
    result = restore(world, job, "at-2")
    replaced = result.replaced
    assert replaced is not None
    assert result.ahead == []
    assert (replaced.name, replaced.kind, replaced.status) == (
        "replaced-20260101-010000",
        SnapshotKind.REPLACED,
        SnapshotStatus.READY,
    )
    assert (replaced.batches, replaced.requested_by) == ({QUERY: 4}, "admin")
    assert [p.describe() for p in replaced.positions] == ["delta version 2 (batch 2)"]
    kept = world.snapshot_root / str(replaced.directory) / "checkpoint"
    assert commits(kept) == ["0", "1", "2", "3", "4"]
    assert commits(checkpoint) == ["0", "1", "2"]
    assert [p.name for p in checkpoint.parent.iterdir()] == [checkpoint.name]
    source = world.snapshot_root / str(snapshot.directory) / "checkpoint"
    assert commits(source) == ["0", "1", "2"]
    names = [s.name for s in world.snapshots.list(job, actor=ADMIN)]
    assert names == ["replaced-20260101-010000", "at-2"]
    assert restore(world, job, "replaced-20260101-010000").snapshot.name == (
        "replaced-20260101-010000"
    )
    assert commits(checkpoint) == ["0", "1", "2", "3", "4"]


def test_a_job_without_a_checkpoint_yet_gets_a_copy_and_nothing_is_replaced(
    world: World,
) -> None:
    job = world.job()
    taken(world, job, "first", batch=1)
    checkpoint = world.checkpoint(job)
    assert not checkpoint.exists()
    result = restore(world, job, "first")
    assert result.replaced is None
    assert commits(checkpoint) == ["0", "1"]
    checkpoint_empty = world.job()
    taken(world, checkpoint_empty, "first", batch=1)
    world.checkpoint(checkpoint_empty).mkdir(parents=True)
    assert restore(world, checkpoint_empty, "first").replaced is None


def test_only_a_ready_snapshot_of_the_job_can_be_started_from(world: World) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="asked", actor=ADMIN)
    with pytest.raises(NotFound, match=f"snapshot '{job}/missing' does not exist"):
        restore(world, job, "missing")
    with pytest.raises(Conflict, match="is TAKING, not READY"):
        restore(world, job, "asked")
    world.end(application)


def test_a_checkpoint_that_cannot_be_set_aside_is_left_as_it_was(world: World) -> None:
    job = world.job()
    taken(world, job, "at-1", batch=1)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 3)
    (checkpoint / QUERY / "state").symlink_to("/etc")
    with pytest.raises(Conflict, match=f"{QUERY}/state is a symbolic link; nothing was changed"):
        restore(world, job, "at-1")
    assert commits(checkpoint) == ["0", "1", "2", "3"]
    assert [p.name for p in checkpoint.parent.iterdir()] == [checkpoint.name]
    assert [s.name for s in world.snapshots.list(job, actor=ADMIN)] == ["at-1"]


def test_a_failed_swap_puts_the_checkpoint_back(world: World) -> None:
    job = world.job()
    snapshot = taken(world, job, "at-1", batch=1)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 3)
    source = world.snapshot_root / str(snapshot.directory) / "checkpoint" / QUERY / "commits"
    os.mkfifo(source / "7")  # the copy of the snapshot fails on it
    with pytest.raises(Conflict, match="nothing was changed"):
        restore(world, job, "at-1")
    assert commits(checkpoint) == ["0", "1", "2", "3"]
    assert [p.name for p in checkpoint.parent.iterdir()] == [checkpoint.name]
    assert sorted(os.listdir(world.snapshot_root)) == [snapshot.directory]


def test_a_swap_failing_after_the_checkpoint_moved_puts_it_back(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = world.job()
    snapshot = taken(world, job, "at-1", batch=1)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 3)
    rename = os.rename

    def failing_last(source: str | Path, target: str | Path) -> None:
        if Path(source).name.startswith(".restore-"):
            raise OSError(28, "No space left on device")
        rename(source, target)

    monkeypatch.setattr(os, "rename", failing_last)
    with pytest.raises(Conflict, match="No space left on device; its checkpoint was left as"):
        restore(world, job, "at-1")
    monkeypatch.undo()
    assert commits(checkpoint) == ["0", "1", "2", "3"]
    assert [p.name for p in checkpoint.parent.iterdir()] == [checkpoint.name]
    assert sorted(os.listdir(world.snapshot_root)) == [snapshot.directory]
    assert [s.name for s in world.snapshots.list(job, actor=ADMIN)] == ["at-1"]
