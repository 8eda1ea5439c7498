"""Run from a snapshot, asked for (``from_snapshot``) or by the job's ``initialSnapshotName``:
the checkpoint swapped for a copy of the snapshot and what it replaced kept, and each refusal
(a live application, a missing snapshot, outputs gone on past it) leaving everything as it was.

A first application takes the snapshot (the test playing its runner), then stops; the job's
checkpoint and file output are then written as Spark would have left them.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.domain.errors import CannotRun, Conflict, NotFound
from streamjobs.domain.snapshots import OutputPosition, SnapshotKind, SnapshotStatus
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord
from tests.factories import changed, pipeline_manifest
from tests.staged_files import write_query_checkpoint
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.snapshot_staging import checkpoint_of, stage_snapshot, write_sink_log

pytestmark = pytest.mark.snapshots


@pytest.fixture
def output() -> Iterator[Path]:
    """A file output's directory of this test's own under a data root of the default bundle."""
    directory = Path("/tmp/out") / f"run-from-snapshot-{uuid.uuid4().hex[:12]}"
    yield directory / "evens"
    shutil.rmtree(directory, ignore_errors=True)


def job_writing_to(world: World, output: Path, **processing: object) -> None:
    manifest = changed(
        pipeline_manifest("ticks"),
        ("spec.pipeline.outputs[0].path", str(output)),
        ("spec.processing", dict(processing)),
    )
    world.services.jobs.create(manifest, actor=ALICE)


def running(world: World) -> str:
    application = world.services.applications.run("ticks", actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    return application.id


def snapshot_then_stop(world: World, name: str = "nightly", *, batch: int = 2) -> Path:
    """Run the job, take snapshot ``name`` at ``batch`` (the output at that batch too), stop
    it; its checkpoint, which then went on to batch 5."""
    application_id = running(world)
    world.services.snapshots.take("ticks", name=name, actor=ALICE)
    world.tick()
    position = OutputPosition(output="evens", format="parquet", batch_id=batch)
    stage_snapshot(
        world,
        application_id,
        name,
        SnapshotKind.MANUAL,
        batches={"evens": batch},
        positions=[position],
    )
    world.tick()
    assert world.services.snapshots.get("ticks", name, actor=ALICE).status is SnapshotStatus.READY
    world.services.applications.stop("ticks", actor=ALICE)
    world.tick()
    world.tick()
    assert world.app(application_id).state is AppState.STOPPED
    checkpoint = checkpoint_of(world, application_id)
    write_query_checkpoint(checkpoint / "evens", 5)
    return checkpoint


def commits(checkpoint: Path) -> list[int]:
    """The batches the checkpoint's one query committed."""
    return sorted(int(path.name) for path in (checkpoint / "evens" / "commits").iterdir())


def events_of(world: World, application: ApplicationRecord) -> dict[str, str]:
    listed = world.services.applications.events(application.id, actor=ALICE)
    return {event.kind: event.message for event in listed}


def test_a_run_from_a_snapshot_starts_from_a_copy_and_keeps_the_checkpoint_it_replaced(
    world: World, output: Path
) -> None:
    job_writing_to(world, output)
    checkpoint = snapshot_then_stop(world)
    write_sink_log(output, 2)
    application = world.services.applications.run("ticks", actor=ALICE, from_snapshot="nightly")
    assert application.state is AppState.STARTING
    assert commits(checkpoint) == [0, 1, 2]
    replaced = [
        each
        for each in world.services.snapshots.list("ticks", actor=ALICE)
        if each.kind is SnapshotKind.REPLACED
    ]
    assert [each.batches for each in replaced] == [{"evens": 5}]
    message = events_of(world, application)["started-from-snapshot"]
    assert "snapshot nightly" in message
    assert replaced[0].name in message
    with world.services.store.reading() as repos:
        (audited,) = repos.audit.list(action="job.run", limit=1)
    assert audited.detail == {"application": application.id, "fromSnapshot": "nightly"}


def test_a_snapshot_older_than_an_output_is_refused_unless_replay_is_allowed(
    world: World, output: Path
) -> None:
    job_writing_to(world, output)
    checkpoint = snapshot_then_stop(world)
    write_sink_log(output, 5)
    with pytest.raises(Conflict, match="evens: the snapshot is at parquet sink log batch 2"):
        world.services.applications.run("ticks", actor=ALICE, from_snapshot="nightly")
    assert world.services.applications.run_refusal("ticks", actor=ALICE) is None
    assert commits(checkpoint) == [0, 1, 2, 3, 4, 5]
    assert world.services.jobs.get("ticks", actor=ALICE).status == "STOPPED"
    application = world.services.applications.run(
        "ticks", actor=ALICE, from_snapshot="nightly", allow_replay=True
    )
    assert commits(checkpoint) == [0, 1, 2]
    message = events_of(world, application)["started-from-snapshot"]
    assert "replay allowed, these outputs were ahead of it: evens" in message
    assert "batch 5" in message


def test_a_live_application_keeps_its_checkpoint(world: World, output: Path) -> None:
    job_writing_to(world, output)
    checkpoint = snapshot_then_stop(world)
    running(world)
    with pytest.raises(Conflict, match="already has a live application"):
        world.services.applications.run("ticks", actor=ALICE, from_snapshot="nightly")
    assert commits(checkpoint) == [0, 1, 2, 3, 4, 5]


def test_a_missing_snapshot_starts_nothing(world: World, output: Path) -> None:
    job_writing_to(world, output)
    with pytest.raises(NotFound, match="nope"):
        world.services.applications.run("ticks", actor=ALICE, from_snapshot="nope")
    assert world.services.jobs.get("ticks", actor=ALICE).status != "STARTING"
    with world.services.store.reading() as repos:
        assert repos.applications.live_for_job("ticks") is None


def test_an_initial_snapshot_that_does_not_exist_refuses_the_run(
    world: World, output: Path
) -> None:
    job_writing_to(world, output, initialSnapshotName="base")
    with pytest.raises(CannotRun) as refused:
        world.services.applications.run("ticks", actor=ALICE)
    assert [(error.path, error.message) for error in refused.value.errors] == [
        ("spec.processing.initialSnapshotName", "no snapshot named 'base' of job 'ticks'")
    ]
    refusal = world.services.applications.run_refusal("ticks", actor=ALICE)
    assert "no snapshot named 'base'" in (refusal or "")


def test_the_initial_snapshot_is_started_from_while_the_checkpoint_holds_no_state(
    world: World, output: Path
) -> None:
    job_writing_to(world, output)
    checkpoint = snapshot_then_stop(world, "base")
    world.services.jobs.update(
        "ticks", {"spec": {"processing": {"initialSnapshotName": "base"}}}, actor=ALICE
    )
    # the checkpoint holds state: the initial snapshot is not used
    application = world.services.applications.run("ticks", actor=ALICE)
    assert "started-from-snapshot" not in events_of(world, application)
    assert commits(checkpoint) == [0, 1, 2, 3, 4, 5]
    world.services.applications.abort(application.id, actor=ALICE)
    world.tick()
    world.tick()
    shutil.rmtree(checkpoint / "evens")  # as if the job had never run: no state
    application = world.services.applications.run("ticks", actor=ALICE)
    assert "snapshot base" in events_of(world, application)["started-from-snapshot"]
    assert commits(checkpoint) == [0, 1, 2]


def test_an_initial_snapshot_is_not_needed_once_the_checkpoint_holds_state(
    world: World, output: Path
) -> None:
    job_writing_to(world, output, initialSnapshotName="base")
    checkpoint = world.services.settings.resolved_home / "checkpoints" / "default" / "ticks"
    write_query_checkpoint(checkpoint / "evens", 1)
    application = world.services.applications.run("ticks", actor=ALICE)
    assert checkpoint_of(world, application.id) == checkpoint
    assert "started-from-snapshot" not in events_of(world, application)
