"""Queueing notices (``services.outbox``) over a real store, on SQLite and PostgreSQL: which
subscriptions take an event, what a queued notice holds, that it shares its event's transaction,
and that a job without subscriptions costs one small read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event

from streamjobs.domain.alerts import NotificationEvent, Subscription
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.notices import Notice
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.services import outbox
from streamjobs.services.application_state import move
from streamjobs.services.outbox import enqueue_notifications
from streamjobs.store import Store
from streamjobs.store.notifications import DeliveryState
from tests.store.conftest import AddApplication, AddJob

SUBSCRIPTIONS = [
    {"destination": "ops-mail", "events": ["failed", "suspended", "health-firing"]},
    {"destination": "ops-hook", "events": ["failed", "restarting"]},
    {
        "destination": "pager",
        "events": ["health-firing", "health-recovered"],
        "rules": ["lagging"],
    },
]


def job_with(add_job: AddJob, name: str, subscriptions: list[dict[str, Any]]) -> None:
    manifest = {
        "metadata": {"name": name},
        "spec": {"bundle": "default", "notifications": subscriptions},
    }
    add_job(name, manifest=manifest, namespace="payments")


def queued(store: Store, application_id: str | None = None) -> list[tuple[str, str]]:
    with store.reading() as repos:
        rows = repos.notifications.due(FakeClock().now() + timedelta(days=3650), 100)
    return [
        (row.destination, row.event)
        for row in rows
        if application_id is None or row.application_id == application_id
    ]


def enqueue(store: Store, clock: FakeClock, event: NotificationEvent, **more: Any) -> int:
    with store.transaction() as repos:
        return enqueue_notifications(
            repos,
            job_name="orders",
            application_id=more.pop("application_id", "app-1"),
            event=event,
            message=more.pop("message", "attempt 1 failed: boom"),
            at=clock.now(),
            **more,
        )


def test_a_lifecycle_event_goes_to_each_destination_subscribed_to_it(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    job_with(add_job, "orders", SUBSCRIPTIONS)
    assert enqueue(store, clock, NotificationEvent.FAILED) == 2
    assert enqueue(store, clock, NotificationEvent.RESTARTING, attempt=2) == 1
    assert enqueue(store, clock, NotificationEvent.COMPLETED) == 0
    assert queued(store) == [
        ("ops-mail", "failed"),
        ("ops-hook", "failed"),
        ("ops-hook", "restarting"),
    ]


def test_a_health_event_goes_only_where_its_rule_is_taken(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    job_with(add_job, "orders", SUBSCRIPTIONS)
    assert enqueue(store, clock, NotificationEvent.HEALTH_FIRING, rule="lagging") == 2
    assert enqueue(store, clock, NotificationEvent.HEALTH_FIRING, rule="stalled") == 1
    assert enqueue(store, clock, NotificationEvent.HEALTH_RECOVERED, rule="stalled") == 0
    assert queued(store) == [
        ("ops-mail", "health-firing"),
        ("pager", "health-firing"),
        ("ops-mail", "health-firing"),
    ]


def test_the_queued_notice_holds_the_event_its_job_and_a_link(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    job_with(add_job, "orders", SUBSCRIPTIONS[:1])
    figures = {"inputRowsPerSecond": 12.5, "recordsBehind": 40}
    enqueue(store, clock, NotificationEvent.FAILED, attempt=3, figures=figures)
    with store.reading() as repos:
        (row,) = repos.notifications.due(clock.now(), 10)
    assert (row.state, row.attempts, row.job_name, row.application_id) == (
        DeliveryState.PENDING,
        0,
        "orders",
        "app-1",
    )
    notice = Notice.from_json(row.notice)
    assert notice == Notice(
        event=NotificationEvent.FAILED,
        job="orders",
        at=clock.now(),
        message="attempt 1 failed: boom",
        application_id="app-1",
        bundle="default",
        namespace="payments",
        attempt=3,
        figures=figures,
        link="/applications/app-1",
    )


def test_a_deleted_job_or_one_without_subscriptions_queues_nothing(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    job_with(add_job, "orders", [])
    assert enqueue(store, clock, NotificationEvent.FAILED) == 0
    with store.transaction() as repos:
        assert (
            enqueue_notifications(
                repos,
                job_name="gone",
                application_id="x",
                event=NotificationEvent.FAILED,
                message="m",
                at=clock.now(),
            )
            == 0
        )
    assert queued(store) == []


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """Each statement sent to the database meanwhile, with its parameters."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(f"{args[2]} {args[3]}")

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_job_without_subscriptions_costs_one_read_of_its_subscriptions_only(
    store: Store,
    engine: Engine,
    clock: FakeClock,
    add_job: AddJob,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not the manifest: a big one (a long SQL step) is neither fetched nor parsed."""
    manifest = {
        "metadata": {"name": "orders"},
        "spec": {"bundle": "default", "notifications": [], "pipeline": {"sql": "x" * 200_000}},
    }
    add_job("orders", manifest=manifest)
    parsed: list[object] = []
    monkeypatch.setattr(outbox, "Subscription", SpySubscription(parsed))
    with statements(engine) as seen:
        assert enqueue(store, clock, NotificationEvent.FAILED) == 0
    (read,) = seen  # nothing written, one read
    assert read.lstrip().upper().startswith("SELECT")
    assert "notifications" in read  # the JSON path spec.notifications ...
    assert read.count("jobs.manifest") == 1  # ... the one place the manifest is named
    assert re.search(r"JSON_EXTRACT\(jobs\.manifest|jobs\.manifest #>", read)
    assert "x" * 100 not in read
    assert parsed == []


class SpySubscription:
    """Counts the subscriptions ``enqueue_notifications`` parses."""

    def __init__(self, parsed: list[object]) -> None:
        self._parsed = parsed

    def model_validate(self, raw: object) -> Subscription:
        self._parsed.append(raw)
        return Subscription.model_validate(raw)


def test_a_job_with_subscriptions_parses_only_them(
    store: Store, clock: FakeClock, add_job: AddJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_with(add_job, "orders", SUBSCRIPTIONS)
    parsed: list[object] = []
    monkeypatch.setattr(outbox, "Subscription", SpySubscription(parsed))
    assert enqueue(store, clock, NotificationEvent.FAILED) == 2
    assert parsed == SUBSCRIPTIONS


def test_notices_are_written_and_rolled_back_with_their_state_change(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    job_with(add_job, "orders", SUBSCRIPTIONS[:2])
    application = add_application("orders", state=AppState.RUNNING)

    def fail_then_roll_back() -> None:
        with store.transaction() as repos:
            move(repos, application, AppEvent.FAILED, at=clock.now())
            assert len(repos.notifications.for_application(application.id)) == 2
            raise RuntimeError("the transaction rolls back")

    with pytest.raises(RuntimeError, match="rolls back"):
        fail_then_roll_back()
    assert queued(store, application.id) == []
    with store.transaction() as repos:
        move(repos, application, AppEvent.FAILED, at=clock.now())
    assert queued(store, application.id) == [("ops-mail", "failed"), ("ops-hook", "failed")]


def test_a_move_that_is_no_event_queues_nothing(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    job_with(add_job, "orders", [{"destination": "all", "events": list(NotificationEvent)}])
    application = add_application("orders", state=AppState.RUNNING)
    with store.transaction() as repos:
        stopping = move(repos, application, AppEvent.STOP_REQUESTED, at=clock.now())
        move(repos, stopping, None, at=clock.now(), changes={"driver_state": "EXITED"})
    assert queued(store, application.id) == []
    with store.transaction() as repos:
        move(repos, repos.applications.get(application.id), AppEvent.STOPPED, at=clock.now())
    assert queued(store, application.id) == [("all", "stopped")]


def test_a_stored_subscription_that_no_longer_parses_is_skipped_not_fatal(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    """A subscription a later version refuses (here: an event it does not know) must not fail the
    state change queueing the notices: the others are still told."""
    job_with(
        add_job,
        "orders",
        [{"destination": "old-hook", "events": ["exploded"]}, *SUBSCRIPTIONS[:1]],
    )
    assert enqueue(store, clock, NotificationEvent.FAILED) == 1
    assert queued(store) == [("ops-mail", "failed")]
