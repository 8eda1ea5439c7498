"""The supervisor's snapshot step: requests delivered to the runners once, staged snapshots
collected (also those of an application that ended in the same tick), and one application's
failure kept to that application.

The step runs over the applications and attempts of a real store (the fake launcher's drivers);
the snapshot service is a recording stand-in here, so what the step asks of it is seen exactly
(``test_snapshot_collection`` runs the real one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from streamjobs.domain.snapshots import SNAPSHOTS_DIRECTORY, SnapshotKind, SnapshotRequest
from streamjobs.domain.states import ACTIVE_STATES, AppState
from streamjobs.launch.base import Launcher
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from streamjobs.supervisor.snapshots import SnapshotStep
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import ON_FAILURE_TWICE, started

pytestmark = pytest.mark.snapshots


@dataclass(frozen=True)
class Pending:
    id: str
    name: str
    kind: SnapshotKind = SnapshotKind.MANUAL


@dataclass
class RecordingSnapshots:
    """Answers as the snapshot service would, and records every call."""

    pending: list[tuple[Pending, ApplicationRecord]] = field(default_factory=list)
    calls: list[tuple[str, object]] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)
    """Applications whose collect raises."""
    expect_fails: bool = False

    def pending_requests(self) -> Sequence[tuple[Pending, ApplicationRecord]]:
        return list(self.pending)

    def expect(self, application_id: str, request: SnapshotRequest) -> None:
        self.calls.append(("expect", (application_id, request.name, request.kind)))
        if self.expect_fails:
            raise RuntimeError("the store is away")

    def collect(self, application_id: str) -> Sequence[object]:
        self.calls.append(("collect", application_id))
        if application_id in self.broken:
            raise OSError("unreadable")
        return []

    def expire(self) -> Sequence[object]:
        self.calls.append(("expire", None))
        return []

    def called(self, kind: str) -> list[object]:
        return [argument for call, argument in self.calls if call == kind]


def supervised(world: World) -> list[tuple[ApplicationRecord, AttemptRecord | None]]:
    with world.services.store.reading() as repos:
        applications = repos.applications.supervised()
        attempts = repos.applications.latest_attempts_in(ACTIVE_STATES)
    return [(application, attempts.get(application.id)) for application in applications]


def stage(world: World, application_id: str, name: str) -> Path:
    """What a runner leaves as it takes a snapshot: a directory in its attempt's."""
    attempt = world.services.applications.get(application_id, actor=ALICE).attempts[-1]
    staged = Path(attempt.directory) / SNAPSHOTS_DIRECTORY / name
    staged.mkdir(parents=True)
    return staged


def started_with_another(world: World, *, heartbeat: bool = False) -> tuple[str, str]:
    """A started application and one of the job ``other`` past its first tick (RUNNING too,
    with ``heartbeat``); their ids."""
    first = started(world)
    world.create_job("other")
    second = world.services.applications.run("other", actor=ALICE).id
    world.tick()
    if heartbeat:
        world.report(second, {"type": "heartbeat"})
        world.tick()
    return first, second


def launcher_of(world: World) -> Callable[[ApplicationRecord], Launcher]:
    return lambda application: world.launcher


def test_a_requested_snapshot_is_delivered_to_the_running_driver_once(world: World) -> None:
    application_id = started(world)
    snapshots = RecordingSnapshots(pending=[(Pending("s-1", "nightly"), world.app(application_id))])
    step = SnapshotStep(snapshots=snapshots)
    for _ in range(3):
        step.run(supervised(world), launcher_of(world))
    driver = world.launcher.drivers[-1]
    assert driver.snapshot_requests == [SnapshotRequest(name="nightly")]
    assert driver.calls == ["snapshot"]


def test_the_next_attempt_of_a_restarted_driver_is_asked_again(world: World) -> None:
    application_id = started(world, restartPolicy=ON_FAILURE_TWICE)
    snapshots = RecordingSnapshots(pending=[(Pending("s-1", "nightly"), world.app(application_id))])
    step = SnapshotStep(snapshots=snapshots)
    step.run(supervised(world), launcher_of(world))
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.PENDING_RERUN
    step.run(supervised(world), launcher_of(world))  # no driver up: nothing to ask
    world.tick(10)
    assert len(world.launcher.drivers) == 2
    step.run(supervised(world), launcher_of(world))
    assert [driver.snapshot_requests for driver in world.launcher.drivers] == [
        [SnapshotRequest(name="nightly")],
        [SnapshotRequest(name="nightly")],
    ]


def test_nothing_is_delivered_before_the_driver_is_started(world: World) -> None:
    name = world.create_job()
    application = world.services.applications.run(name, actor=ALICE)
    snapshots = RecordingSnapshots(pending=[(Pending("s-1", "nightly"), application)])
    SnapshotStep(snapshots=snapshots).run(supervised(world), launcher_of(world))
    assert world.launcher.drivers == []


def test_one_driver_that_cannot_be_asked_does_not_keep_the_others_from_being_asked(
    world: World,
) -> None:
    first, second = started_with_another(world, heartbeat=True)
    snapshots = RecordingSnapshots(
        pending=[
            (Pending("s-1", "a"), world.app(first)),
            (Pending("s-2", "b"), world.app(second)),
        ]
    )

    class Refusing:
        def request_snapshot(self, *_: object) -> None:
            raise OSError("the attempt directory is gone")

    def launchers(application: ApplicationRecord) -> Launcher:
        return Refusing() if application.id == first else world.launcher  # type: ignore[return-value]

    step = SnapshotStep(snapshots=snapshots)
    step.run(supervised(world), launchers)
    assert world.launcher.drivers[-1].snapshot_requests == [SnapshotRequest(name="b")]
    step.run(supervised(world), world_launcher := launcher_of(world))
    assert world.launcher.drivers[0].snapshot_requests == [SnapshotRequest(name="a")]
    step.run(supervised(world), world_launcher)
    assert [len(driver.snapshot_requests) for driver in world.launcher.drivers] == [1, 1]


def test_the_first_run_collects_every_application_then_only_those_with_staged_snapshots(
    world: World,
) -> None:
    first, second = started_with_another(world)
    snapshots = RecordingSnapshots()
    step = SnapshotStep(snapshots=snapshots)
    step.run(supervised(world), launcher_of(world))
    assert sorted(snapshots.called("collect")) == sorted([first, second])
    snapshots.calls.clear()
    step.run(supervised(world), launcher_of(world))
    assert snapshots.called("collect") == []
    stage(world, second, "periodic-20261122-120000")
    step.run(supervised(world), launcher_of(world))
    assert snapshots.called("collect") == [second]
    assert len(snapshots.called("expire")) == 2  # every run expires (calls cleared after one)


def test_a_failing_collect_is_tried_again_and_keeps_no_other_from_being_collected(
    world: World,
) -> None:
    first, second = started_with_another(world)
    snapshots = RecordingSnapshots(broken={first})
    step = SnapshotStep(snapshots=snapshots)
    step.run(supervised(world), launcher_of(world))
    assert sorted(snapshots.called("collect")) == sorted([first, second])
    assert snapshots.called("expire") == [None]
    snapshots.calls.clear()
    snapshots.broken.clear()
    step.run(supervised(world), launcher_of(world))
    step.run(supervised(world), launcher_of(world))
    assert snapshots.called("collect") == [first]  # once more, then it is done


def test_an_aligned_snapshot_is_expected_once_and_again_after_a_failure() -> None:
    snapshots = RecordingSnapshots(expect_fails=True)
    step = SnapshotStep(snapshots=snapshots)
    request = SnapshotRequest(name="stop-20261122-120000", kind=SnapshotKind.STOP)
    step.aligned("app-1", request)
    snapshots.expect_fails = False
    step.aligned("app-1", request)
    step.aligned("app-1", request)
    assert len(snapshots.called("expect")) == 2


def over(world: World, snapshots: RecordingSnapshots) -> Supervisor:
    """A supervisor over the world's store and launcher with ``snapshots`` as its service."""
    settings = world.services.settings
    return Supervisor(
        store=world.services.store,
        launchers=world.services.launchers,
        attempts=AttemptFactory(
            store=world.services.store,
            apps_directory=settings.apps_directory,
            public_url="http://127.0.0.1:1",
            secrets=world.services.secrets,
            places=world.services.jobs.places,
        ),
        clock=world.clock,
        config=SupervisorConfig(timing=Timing(heartbeat_timeout=60)),
        executor_reader=lambda handle: None,
        snapshots=snapshots,
    )


def test_a_suspend_asks_the_runner_for_a_snapshot_and_collects_it_as_the_driver_ends(
    world: World,
) -> None:
    application_id = started(world)
    snapshots = RecordingSnapshots()
    supervisor = over(world, snapshots)
    supervisor.run_once()
    snapshots.calls.clear()
    world.clock.advance(1)
    world.services.applications.suspend("ticks", actor=ALICE)
    requested_at = world.clock.now()
    name = f"suspend-{requested_at:%Y%m%d-%H%M%S}"
    supervisor.run_once()
    driver = world.launcher.drivers[-1]
    assert driver.stop_snapshot == SnapshotRequest(name=name, kind=SnapshotKind.SUSPEND)
    assert snapshots.called("expect") == [(application_id, name, SnapshotKind.SUSPEND)]
    assert world.app(application_id).state is AppState.TERMINATING
    assert snapshots.called("collect") == []
    stage(world, application_id, name)  # what the runner leaves before it exits
    supervisor.run_once()  # the driver is gone: suspended, and what it staged collected
    assert world.app(application_id).state is AppState.SUSPENDED
    assert snapshots.called("collect") == [application_id]
    assert len(snapshots.called("expect")) == 1
