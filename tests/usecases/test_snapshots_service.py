"""The snapshot use cases on each backend: taking one of a running pipeline (and every refusal),
who may take, read and delete them, the requests the supervisor delivers, expected aligned
snapshots, requests that expire, and a deleted job taking its snapshots with it."""

from __future__ import annotations

import pytest

from streamjobs.domain.access import Permission
from streamjobs.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from streamjobs.domain.snapshots import SnapshotKind, SnapshotRequest, SnapshotStatus
from streamjobs.domain.states import AppState
from streamjobs.services.audit_log import AuditQuery
from streamjobs.services.job_deletion import JobDeletion
from tests.factories import python_manifest
from tests.usecases.snapshot_fixtures import ADMIN, World, world

__all__ = ["world"]

pytestmark = pytest.mark.snapshots


def test_take_records_a_manual_request_of_the_running_application(world: World) -> None:
    job = world.job()
    application = world.running(job)
    taken = world.snapshots.take(job, name="before-upgrade", actor=ADMIN)
    assert (taken.name, taken.kind, taken.status) == (
        "before-upgrade",
        SnapshotKind.MANUAL,
        SnapshotStatus.TAKING,
    )
    assert (taken.application_id, taken.spec_version, taken.requested_by) == (
        application.id,
        1,
        "admin",
    )
    assert world.snapshots.get(job, "before-upgrade", actor=ADMIN) == taken
    pending = world.snapshots.pending_requests()
    assert [(s.name, a.id) for s, a in pending] == [("before-upgrade", application.id)]
    entry = world.services.audit.list(AuditQuery(limit=1), actor=ADMIN).items[0]
    assert (entry.action, entry.resource_name, entry.detail["snapshot"]) == (
        "job.snapshot",
        job,
        "before-upgrade",
    )


def test_an_unnamed_snapshot_is_named_after_its_kind_and_time(world: World) -> None:
    job = world.job()
    world.running(job)
    taken = world.snapshots.take(job, name=None, actor=ADMIN)
    assert taken.name == "manual-20260101-000000"


def test_take_refuses_what_has_no_running_pipeline_checkpoint(world: World) -> None:
    job = world.job()
    with pytest.raises(Conflict, match="has no RUNNING application"):
        world.snapshots.take(job, name=None, actor=ADMIN)
    starting = world.running(job, AppState.STARTING)
    with pytest.raises(Conflict, match=r"its application .* is STARTING"):
        world.snapshots.take(job, name=None, actor=ADMIN)
    world.end(starting, AppState.FAILED)
    unguarded = world.job(processing={"guarantee": "NONE"})
    world.running(unguarded)
    with pytest.raises(Conflict, match="keeps no checkpoint"):
        world.snapshots.take(unguarded, name=None, actor=ADMIN)
    manifest = python_manifest("python-app")
    manifest["spec"]["bundle"] = "snaps"
    world.services.jobs.create(manifest, actor=ADMIN)
    with pytest.raises(Conflict, match="is not a pipeline"):
        world.snapshots.take("python-app", name=None, actor=ADMIN)


def test_take_refuses_a_bad_or_taken_name(world: World) -> None:
    job = world.job()
    world.running(job)
    for bad in ("", "-dash-first", "a/b", "x" * 129, "snap shot"):
        with pytest.raises(InvalidInput) as raised:
            world.snapshots.take(job, name=bad, actor=ADMIN)
        assert [error.path for error in raised.value.errors] == ["name"]
    world.snapshots.take(job, name="nightly", actor=ADMIN)
    with pytest.raises(Conflict, match="has a snapshot named 'nightly' already"):
        world.snapshots.take(job, name="nightly", actor=ADMIN)


def test_who_may_take_read_and_delete(world: World) -> None:
    job = world.job()
    world.running(job)
    viewer = world.grant("viewer", Permission.VIEW)
    runner = world.grant("runner", Permission.VIEW, Permission.RUN)
    editor = world.grant("editor", Permission.VIEW, Permission.UPDATE)
    stranger = world.grant("stranger")
    with pytest.raises(Forbidden, match="needs the RUN permission"):
        world.snapshots.take(job, name="by-viewer", actor=viewer)
    with pytest.raises(Forbidden, match="needs the RUN permission"):
        world.snapshots.take(job, name="by-editor", actor=editor)
    taken = world.snapshots.take(job, name="by-runner", actor=runner)
    assert [s.name for s in world.snapshots.list(job, actor=viewer)] == ["by-runner"]
    with pytest.raises(NotFound):
        world.snapshots.list(job, actor=stranger)
    with pytest.raises(NotFound):
        world.snapshots.get(job, "by-runner", actor=stranger)
    with pytest.raises(Conflict, match="is being taken"):
        world.snapshots.delete(job, "by-runner", actor=editor)
    with world.services.store.transaction() as repos:
        repos.snapshots.update(taken.id, status=SnapshotStatus.FAILED, error="test")
    with pytest.raises(Forbidden, match="needs the UPDATE permission"):
        world.snapshots.delete(job, "by-runner", actor=runner)
    world.snapshots.delete(job, "by-runner", actor=editor)
    assert world.snapshots.list(job, actor=viewer) == []
    with pytest.raises(NotFound, match="snapshot"):
        world.snapshots.delete(job, "by-runner", actor=editor)


def test_only_manual_requests_of_running_applications_are_delivered(world: World) -> None:
    job = world.job()
    application = world.running(job)
    world.snapshots.take(job, name="asked", actor=ADMIN)
    world.snapshots.expect(application.id, SnapshotRequest(name="at-stop", kind=SnapshotKind.STOP))
    assert [s.name for s, _ in world.snapshots.pending_requests()] == ["asked"]
    world.end(application, AppState.TERMINATING)
    assert world.snapshots.pending_requests() == []


def test_expect_records_an_aligned_snapshot_once(world: World) -> None:
    job = world.job()
    application = world.running(job)
    request = SnapshotRequest(name="stop-20260101-000000", kind=SnapshotKind.STOP)
    world.snapshots.expect(application.id, request)
    world.snapshots.expect(application.id, request)
    [expected] = world.snapshots.list(job, actor=ADMIN)
    assert (expected.name, expected.kind, expected.status, expected.application_id) == (
        request.name,
        SnapshotKind.STOP,
        SnapshotStatus.TAKING,
        application.id,
    )


def test_requests_that_will_not_be_answered_expire(world: World) -> None:
    first, second = world.job(), world.job()
    ended = world.running(first)
    world.snapshots.take(first, name="lost", actor=ADMIN)
    world.end(ended, AppState.FAILED)
    running = world.running(second)
    world.snapshots.take(second, name="slow", actor=ADMIN)
    world.clock.advance(300)
    world.snapshots.take(second, name="recent", actor=ADMIN)
    assert [s.name for s in world.snapshots.expire()] == ["lost"]
    world.clock.advance(301)
    [slow] = world.snapshots.expire()
    assert (slow.name, slow.status) == ("slow", SnapshotStatus.FAILED)
    assert slow.error == "the driver did not hand it over within 600 seconds"
    lost = world.snapshots.get(first, "lost", actor=ADMIN)
    assert lost.error is not None
    assert "is FAILED: the driver ended" in lost.error
    assert world.snapshots.get(second, "recent", actor=ADMIN).status is SnapshotStatus.TAKING
    events = world.services.applications.events(running.id, actor=ADMIN)
    assert [e.message for e in events if e.kind == "snapshot-failed"] == [
        "snapshot slow: the driver did not hand it over within 600 seconds"
    ]
    assert world.snapshots.expire() == []


def test_a_deleted_job_takes_its_snapshots_rows_and_files_with_it(world: World) -> None:
    job, other = world.job(), world.job()
    for name in (job, other):
        application = world.running(name)
        world.stage(application, "kept")
        world.snapshots.collect(application.id)
        world.end(application)
    [gone] = world.snapshots.list(job, actor=ADMIN)
    [stays] = world.snapshots.list(other, actor=ADMIN)
    assert gone.directory
    assert stays.directory
    deletion = JobDeletion(
        store=world.services.store,
        clock=world.clock,
        checkpoint_root=world.services.settings.resolved_checkpoint_root,
        protected_roots=[],
        snapshot_root=world.snapshot_root,
    )
    deletion.delete(job, actor=ADMIN)
    assert not (world.snapshot_root / gone.directory).exists()
    assert (world.snapshot_root / stays.directory / "checkpoint").is_dir()
    with world.services.store.reading() as repos:
        assert repos.snapshots.list(job) == []
    entry = world.services.audit.list(AuditQuery(limit=1), actor=ADMIN).items[0]
    assert (entry.action, entry.detail["deletedSnapshots"]) == ("job.deleted", ["kept"])
