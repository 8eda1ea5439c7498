"""The supervisor's health step over a real store (both backends), the fake launcher and a fake
clock: rules fire once and recover with their events and queued notices, a restart action
restarts the application, a program's stall is read from its driver, and one application's
failure leaves the others judged."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from streamjobs.domain.health import Transition
from streamjobs.domain.notices import Notice
from streamjobs.domain.states import AppState
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.streaming_progress import StreamingProgress
from streamjobs.store import ApplicationRecord
from streamjobs.store.notifications import OutboxRecord
from streamjobs.supervisor.executors import EXECUTOR_POLL_SECONDS
from streamjobs.supervisor.health import HealthStep
from streamjobs.supervisor.terms import ApplicationTerms
from tests.factories import python_manifest
from tests.notify_receivers import webhook_destination
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import started as running

SUBSCRIBED = [{"destination": "ops", "events": ["health-firing", "health-recovered"]}]


def backlog_rule(**more: Any) -> dict[str, Any]:
    return {
        "name": "backlog",
        "metric": "recordsBehind",
        "threshold": 100,
        "durationSeconds": 10,
        **more,
    }


def started(world: World, rules: list[dict[str, Any]], **spec: Any) -> str:
    world.services.destinations.create(
        webhook_destination("ops", "http://127.0.0.1:9/hook"), actor=ALICE
    )
    return running(world, health={"rules": rules}, notifications=SUBSCRIBED, **spec)


def progress(
    world: World, batch: int, *, end: int, latest: int, sequence: int, took: int = 500
) -> dict[str, Any]:
    """A Kafka micro-batch's progress report: read up to ``end``, the broker at ``latest``."""
    begun = world.clock.now() - timedelta(seconds=1)
    return {
        "sequence": sequence,
        "type": "progress",
        "name": "orders",
        "progress": {
            "id": "q-1",
            "runId": "r-1",
            "name": "orders",
            "timestamp": begun.isoformat().replace("+00:00", "Z"),
            "batchId": batch,
            "numInputRows": 10,
            "durationMs": {"addBatch": took - 100, "triggerExecution": took},
            "sources": [
                {
                    "description": "KafkaV2[Subscribe[orders]]",
                    "startOffset": {"orders": {"0": max(0, end - 10)}},
                    "endOffset": {"orders": {"0": end}},
                    "latestOffset": {"orders": {"0": latest}},
                    "numInputRows": 10,
                }
            ],
        },
    }


def send(world: World, application_id: str, *events: dict[str, Any], driver: int = -1) -> None:
    token = world.launcher.drivers[driver].attempt.report_token
    assert token is not None
    world.services.reports.receive(application_id, token, list(events))


def queued(world: World) -> list[OutboxRecord]:
    with world.services.store.reading() as repos:
        return list(reversed(repos.notifications.for_destination("ops", 100)))


def health_events(world: World, application_id: str) -> list[str]:
    return [kind for kind in world.events(application_id) if kind.startswith("health-")]


def test_a_backlog_rule_fires_once_notifies_and_recovers(world: World) -> None:
    application_id = started(world, [backlog_rule(actions=["notify"])])
    send(world, application_id, progress(world, 0, end=100, latest=500, sequence=10))
    world.tick()
    assert health_events(world, application_id) == []  # held for 0 s of its 10
    world.tick(9)
    assert health_events(world, application_id) == []
    world.tick(1)
    world.tick(5)
    world.tick(5)
    assert health_events(world, application_id) == ["health-firing"]
    [fired] = queued(world)
    notice = Notice.from_json(fired.notice)
    assert (fired.event, notice.rule, notice.application_id) == (
        "health-firing",
        "backlog",
        application_id,
    )
    assert notice.figures["recordsBehind"] == 400
    assert "recordsBehind > 100" in notice.message
    with world.services.store.reading() as repos:
        state = repos.health.of(application_id)["backlog"]
    assert state.firing
    assert state.last_value == 400

    send(world, application_id, progress(world, 1, end=500, latest=500, sequence=11))
    world.tick()
    world.tick(1)
    assert health_events(world, application_id) == ["health-firing", "health-recovered"]
    events = {
        event.kind: event
        for event in world.services.applications.events(application_id, actor=ALICE)
    }
    assert "recovered" in events["health-recovered"].message
    assert [row.event for row in queued(world)] == ["health-firing", "health-recovered"]
    with world.services.store.reading() as repos:
        assert not repos.health.of(application_id)["backlog"].firing
    assert world.app(application_id).state is AppState.RUNNING  # notify only: no restart


def test_a_rule_without_notify_records_events_but_queues_nothing(world: World) -> None:
    application_id = started(world, [backlog_rule(durationSeconds=0, actions=["restart"])])
    send(world, application_id, progress(world, 0, end=100, latest=500, sequence=10))
    world.tick()
    assert health_events(world, application_id) == ["health-firing"]
    assert queued(world) == []


def test_a_stall_rule_restarts_the_application_whatever_its_policy(world: World) -> None:
    stall = {
        "name": "stall",
        "metric": "stalledSeconds",
        "threshold": 30,
        "actions": ["notify", "restart"],
    }
    application_id = started(world, [stall])  # restartPolicy Never
    send(world, application_id, progress(world, 0, end=100, latest=500, sequence=10))
    world.tick(20)
    assert world.app(application_id).requested is None
    world.tick(20)  # 40 s after its last commit, input waiting: stalled
    application = world.app(application_id)
    assert application.requested == "restart"
    assert application.requested_by == "health rule stall"
    firing = [
        e
        for e in world.services.applications.events(application_id, actor=ALICE)
        if e.kind == "health-firing"
    ]
    assert "restarting the application" in firing[0].message
    world.tick()  # the driver is aborted
    assert not world.launcher.drivers[0].running
    world.tick()  # gone: the next attempt is due now
    assert world.app(application_id).state is AppState.PENDING_RERUN
    world.tick()
    application = world.app(application_id)
    assert application.state is AppState.STARTING
    assert (application.restarts, application.requested) == (1, None)
    assert len(world.launcher.drivers) == 2
    world.report(application_id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application_id).state is AppState.RUNNING
    world.tick(1)  # the new attempt has not stalled: it just started
    kinds = world.events(application_id)
    assert kinds[kinds.index("health-firing") :] == [
        "health-firing",
        "driver-exited",
        "restarting",
        "submitted",
        "driver-running",
        "health-recovered",
    ]
    assert [row.event for row in queued(world)] == ["health-firing", "health-recovered"]
    with world.services.store.reading() as repos:
        attempts = repos.applications.attempts(application_id)
    assert [attempt.outcome for attempt in attempts] == ["restarted", None]


def test_slow_batches_in_a_row_are_read_from_the_stored_progress_reports(world: World) -> None:
    slow = {"name": "slow", "metric": "batchDurationMs", "threshold": 1000, "batches": 2}
    application_id = started(world, [slow])
    send(world, application_id, progress(world, 0, end=10, latest=10, sequence=10, took=2000))
    world.tick(1)
    # the same batch reported again is one batch, not two in a row
    send(world, application_id, progress(world, 0, end=10, latest=10, sequence=11, took=2000))
    world.tick(1)
    assert health_events(world, application_id) == []
    send(world, application_id, progress(world, 1, end=20, latest=20, sequence=12, took=3000))
    world.tick(1)
    assert health_events(world, application_id) == ["health-firing"]
    send(world, application_id, progress(world, 2, end=30, latest=30, sequence=13, took=200))
    world.tick(1)
    assert health_events(world, application_id) == ["health-firing", "health-recovered"]


def test_a_restart_loop_rule_counts_restarts_within_its_window(world: World) -> None:
    loop = {"name": "loop", "metric": "restarts", "threshold": 1, "windowSeconds": 600}
    policy = {"type": "Always", "onFailureRetries": 5, "onFailureRetryInterval": 1}
    application_id = started(world, [loop], restartPolicy=policy)
    for _ in range(2):
        world.launcher.exit(-1, 1)
        world.tick()
        world.tick(1)
        world.report(application_id, {"type": "heartbeat"})
        world.tick()
        assert world.app(application_id).state is AppState.RUNNING
    assert health_events(world, application_id) == ["health-firing"]
    world.tick(601)
    assert health_events(world, application_id) == ["health-firing", "health-recovered"]


def running_program(world: World, rules: list[dict[str, Any]]) -> ApplicationRecord:
    manifest = python_manifest("program")
    manifest["spec"]["health"] = {"rules": rules}
    world.services.jobs.create(manifest, actor=ALICE)
    application = world.services.applications.run("program", actor=ALICE)
    world.tick()
    with world.services.store.transaction() as repos:
        current = repos.applications.get(application.id)
        return repos.applications.update(
            application.id,
            version=current.version,
            at=world.clock.now(),
            state=AppState.RUNNING,
            running_since=world.clock.now(),
        )


def supervised(world: World, application_id: str) -> list[Any]:
    with world.services.store.reading() as repos:
        return [
            (
                repos.applications.get(application_id),
                repos.applications.latest_attempt(application_id),
            )
        ]


def terms_of(world: World) -> Any:
    def read(application: ApplicationRecord) -> ApplicationTerms:
        with world.services.store.reading() as repos:
            return ApplicationTerms.of(repos.applications.spec(application.id), application.version)

    return read


def test_a_programs_stall_is_read_from_its_driver_no_more_often_than_executors(
    world: World,
) -> None:
    stall = {"name": "stall", "metric": "stalledSeconds", "threshold": 60}
    application = running_program(world, [stall])
    asked: list[DriverHandle] = []
    last_batch: list[datetime | None] = [None]

    def reader(handle: DriverHandle) -> StreamingProgress | None:
        asked.append(handle)
        return StreamingProgress(last_batch[0])

    step = HealthStep(store=world.services.store, clock=world.clock, progress_reader=reader)
    read_terms = terms_of(world)
    assert step.run(supervised(world, application.id), read_terms) == []
    assert len(asked) == 1
    world.clock.advance(EXECUTOR_POLL_SECONDS / 2)
    step.run(supervised(world, application.id), read_terms)
    assert len(asked) == 1  # not due yet
    last_batch[0] = world.clock.now()
    world.clock.advance(EXECUTOR_POLL_SECONDS / 2)
    step.run(supervised(world, application.id), read_terms)
    assert len(asked) == 2
    world.clock.advance(57)  # its last batch was 59.5 s ago
    assert step.run(supervised(world, application.id), read_terms) == []
    world.clock.advance(2)
    assert step.run(supervised(world, application.id), read_terms) == [
        (application.id, "stall", Transition.FIRED)
    ]


def test_one_applications_failure_leaves_the_others_judged(world: World) -> None:
    rule = backlog_rule(durationSeconds=0)
    first = started(world, [rule])
    step = HealthStep(store=world.services.store, clock=world.clock)
    read_terms = terms_of(world)
    second = running_program(world, [{"name": "stall", "metric": "stalledSeconds", "threshold": 1}])
    send(world, first, progress(world, 0, end=100, latest=500, sequence=10), driver=0)

    def failing_for_the_program(application: ApplicationRecord) -> ApplicationTerms:
        if application.id == second.id:
            raise RuntimeError("unreadable spec")
        return read_terms(application)

    both = supervised(world, second.id) + supervised(world, first)
    assert step.run(both, failing_for_the_program) == [(first, "backlog", Transition.FIRED)]
