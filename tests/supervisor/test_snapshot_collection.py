"""Snapshots through the supervisor with the real snapshot service and the fake launcher, the
test playing the runner: a person's snapshot delivered and collected, a Stop's and a Suspend's
aligned snapshot recorded as the driver ends, one never handed over failed, and Resume taking
the job as edited since."""

from __future__ import annotations

import pytest

from streamjobs.domain.errors import Conflict
from streamjobs.domain.snapshots import (
    OutputPosition,
    SnapshotKind,
    SnapshotRequest,
    SnapshotStatus,
)
from streamjobs.domain.states import AppState
from streamjobs.store.snapshots import SnapshotRecord
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.snapshot_staging import automatic, stage_snapshot
from tests.supervisor.test_loop import started

pytestmark = pytest.mark.snapshots


def snapshot(world: World, name: str, job: str = "ticks") -> SnapshotRecord:
    return world.services.snapshots.get(job, name, actor=ALICE)


def test_a_snapshot_asked_for_is_delivered_once_and_ready_once_staged(world: World) -> None:
    application_id = started(world)
    taking = world.services.snapshots.take("ticks", name="nightly", actor=ALICE)
    assert taking.status is SnapshotStatus.TAKING
    world.tick()
    world.tick()
    driver = world.launcher.drivers[-1]
    assert driver.snapshot_requests == [SnapshotRequest(name="nightly")]
    position = OutputPosition(output="evens", format="parquet", batch_id=4)
    stage_snapshot(
        world,
        application_id,
        "nightly",
        SnapshotKind.MANUAL,
        batches={"evens": 4},
        positions=[position],
    )
    world.tick()
    ready = snapshot(world, "nightly")
    assert ready.status is SnapshotStatus.READY
    assert (ready.batches, ready.positions, ready.kind) == (
        {"evens": 4},
        [position],
        SnapshotKind.MANUAL,
    )
    assert ready.application_id == application_id
    assert "snapshot-taken" in world.events(application_id)
    assert driver.snapshot_requests == [SnapshotRequest(name="nightly")]
    assert world.app(application_id).state is AppState.RUNNING


def test_a_suspend_takes_an_aligned_snapshot_and_leaves_the_application_suspended(
    world: World,
) -> None:
    application_id = started(world)
    world.clock.advance(2)
    suspended = world.services.applications.suspend("ticks", actor=ALICE)
    assert suspended.state is AppState.TERMINATING
    name = automatic(SnapshotKind.SUSPEND, world.clock.now())
    world.tick()  # the stop, with the snapshot to take on the way
    driver = world.launcher.drivers[-1]
    assert driver.calls == ["stop"]
    assert driver.stop_snapshot == SnapshotRequest(name=name, kind=SnapshotKind.SUSPEND)
    assert snapshot(world, name).status is SnapshotStatus.TAKING
    stage_snapshot(world, application_id, name, SnapshotKind.SUSPEND, batches={"evens": 7})
    world.tick()  # the driver is gone
    application = world.app(application_id)
    assert application.state is AppState.SUSPENDED
    taken = snapshot(world, name)
    assert (taken.status, taken.kind, taken.batches) == (
        SnapshotStatus.READY,
        SnapshotKind.SUSPEND,
        {"evens": 7},
    )
    assert taken.requested_by == ALICE.name
    assert world.events(application_id)[-4:] == [
        "suspend-requested",
        "driver-exited",
        "suspended",
        "snapshot-taken",  # collected in the tick that saw the driver gone
    ]
    assert world.services.jobs.get("ticks", actor=ALICE).status == "SUSPENDED"


def test_a_stop_records_its_aligned_snapshot_failed_when_the_driver_hands_none_over(
    world: World,
) -> None:
    application_id = started(world)
    world.services.applications.stop("ticks", actor=ALICE)
    name = automatic(SnapshotKind.STOP, world.clock.now())
    world.tick()
    assert world.launcher.drivers[-1].stop_snapshot == SnapshotRequest(
        name=name, kind=SnapshotKind.STOP
    )
    world.tick()
    assert world.app(application_id).state is AppState.STOPPED
    failed = snapshot(world, name)
    assert failed.status is SnapshotStatus.FAILED
    assert "ended without handing it over" in (failed.error or "")


def test_a_snapshot_the_runner_could_not_take_is_failed_with_its_reason(world: World) -> None:
    application_id = started(world)
    world.services.snapshots.take("ticks", name="nightly", actor=ALICE)
    world.tick()
    stage_snapshot(
        world, application_id, "nightly", SnapshotKind.MANUAL, batches={}, error="disk full"
    )
    world.tick()
    failed = snapshot(world, "nightly")
    assert failed.status is SnapshotStatus.FAILED
    assert "disk full" in (failed.error or "")
    assert world.app(application_id).state is AppState.RUNNING


def test_a_suspended_application_resumes_with_the_job_as_edited_since(world: World) -> None:
    application_id = started(world)
    first_version = world.app(application_id).job_version
    world.services.applications.suspend("ticks", actor=ALICE)
    world.tick()
    world.tick()
    assert world.app(application_id).state is AppState.SUSPENDED
    edited = world.services.jobs.update(
        "ticks", {"metadata": {"description": "edited while suspended"}}, actor=ALICE
    )
    resumed = world.services.applications.resume("ticks", actor=ALICE)
    assert resumed.state is AppState.STARTING
    assert resumed.requested is None
    assert resumed.job_version == edited.version != first_version
    template = world.services.applications.template(application_id, actor=ALICE)
    assert template["metadata"]["description"] == "edited while suspended"
    world.tick()
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.job.metadata.description == "edited while suspended"


def test_a_pending_restart_suspends_at_once_without_a_snapshot(world: World) -> None:
    policy = {"type": "OnFailure", "onFailureRetries": 2, "onFailureRetryInterval": 60}
    application_id = started(world, restartPolicy=policy)
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.PENDING_RERUN
    suspended = world.services.applications.suspend("ticks", actor=ALICE)
    assert suspended.state is AppState.SUSPENDED
    world.tick(120)
    assert len(world.launcher.drivers) == 1
    assert world.services.snapshots.list("ticks", actor=ALICE) == []


def test_only_a_live_application_can_be_suspended(world: World) -> None:
    started(world)
    world.services.applications.suspend("ticks", actor=ALICE)
    with pytest.raises(Conflict, match="cannot take a suspend"):
        world.services.applications.suspend("ticks", actor=ALICE)
    world.tick()
    world.tick()
    with pytest.raises(Conflict, match="cannot take a suspend"):
        world.services.applications.suspend("ticks", actor=ALICE)


def test_a_suspend_is_audited(world: World) -> None:
    application_id = started(world)
    world.services.applications.suspend("ticks", actor=ALICE)
    with world.services.store.reading() as repos:
        entries = repos.audit.list(action="job.suspend")
    assert [(entry.resource_name, entry.detail) for entry in entries] == [
        ("ticks", {"application": application_id})
    ]
