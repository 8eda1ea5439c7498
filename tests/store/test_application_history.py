"""What the store keeps of an application's life: its attempts, events, progress and executor
figures, in UTC, and gone with the application."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine, delete

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.states import AppState
from streamjobs.store import Store
from streamjobs.store.tables import (
    ApplicationAttemptRow,
    ApplicationEventRow,
    ApplicationExecutorsRow,
    ApplicationProgressRow,
    ApplicationRow,
)
from tests.store.conftest import AddApplication, CountRows, change


def test_attempts_are_added_changed_and_listed_in_order(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        first = repos.applications.add_attempt(
            application.id, number=1, submitted_at=clock.now(), directory="/home/apps/x/1"
        )
        assert repos.applications.latest_attempt(application.id) == first
        clock.advance(5)
        ended = repos.applications.update_attempt(
            application.id,
            1,
            pid=4321,
            process_started_at=1767225600.25,
            ui_port=4041,
            master="local[2]",
            running_at=clock.now(),
            ended_at=clock.now(),
            exit_code=1,
            outcome="FAILED",
        )
        second = repos.applications.add_attempt(
            application.id,
            number=2,
            submitted_at=clock.now(),
            directory="/home/apps/x/2",
            pid=4400,
            process_started_at=1767225700.5,
            ui_port=4042,
            master="local[2]",
        )
    with store.transaction() as repos:
        assert repos.applications.attempts(application.id) == [ended, second]
        assert repos.applications.latest_attempt(application.id) == second
    assert (ended.pid, ended.process_started_at, ended.ui_port) == (4321, 1767225600.25, 4041)
    assert (ended.exit_code, ended.outcome, ended.ended_at) == (1, "FAILED", clock.now())
    assert (ended.submitted_at, ended.directory) == (first.submitted_at, first.directory)
    assert (second.number, second.running_at, second.ended_at) == (2, None, None)


def test_attempt_mistakes_are_refused(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        repos.applications.add_attempt(
            application.id, number=1, submitted_at=clock.now(), directory="/d"
        )
        assert repos.applications.latest_attempt("app-000000000000") is None
        with pytest.raises(AlreadyExists, match=f"attempt '{application.id} #1'"):
            repos.applications.add_attempt(
                application.id, number=1, submitted_at=clock.now(), directory="/d"
            )
        with pytest.raises(NotFound, match=f"attempt '{application.id} #2'"):
            repos.applications.update_attempt(application.id, 2, exit_code=0)
        with pytest.raises(TypeError, match="submitted_at cannot be changed"):
            repos.applications.update_attempt(application.id, 1, submitted_at=clock.now())
        with pytest.raises(NotFound, match="application 'app-000000000000'"):
            repos.applications.add_attempt(
                "app-000000000000", number=1, submitted_at=clock.now(), directory="/d"
            )


def test_events_read_back_in_the_order_they_were_added(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    other = add_application("payments")
    kinds = ["submitted", "driver-running", "first-batch-committed", "driver-exited", "restarting"]
    with store.transaction() as repos:
        for kind in kinds:
            repos.applications.add_event(application.id, at=clock.now(), kind=kind, message=kind)
            repos.applications.add_event(other.id, at=clock.now(), kind="noise", message="-")
            clock.advance(1)
        with pytest.raises(NotFound, match="application 'app-000000000000'"):
            repos.applications.add_event(
                "app-000000000000", at=clock.now(), kind="submitted", message=""
            )
    with store.transaction() as repos:
        events = repos.applications.events(application.id)
        after_second = repos.applications.events(application.id, after_id=events[1].id, limit=2)
    assert [event.kind for event in events] == kinds
    assert [event.message for event in events] == kinds
    assert {event.application_id for event in events} == {application.id}
    assert events[0].at == clock.now() - timedelta(seconds=5)
    assert [event.kind for event in after_second] == ["first-batch-committed", "driver-exited"]


def test_events_page_newest_first_before_an_id(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    other = add_application("payments")
    with store.transaction() as repos:
        for number in range(5):
            repos.applications.add_event(
                application.id, at=clock.now(), kind="note", message=str(number)
            )
            repos.applications.add_event(other.id, at=clock.now(), kind="noise", message="-")
    with store.transaction() as repos:
        newest = repos.applications.events(application.id, newest_first=True, limit=2)
        older = repos.applications.events(
            application.id, newest_first=True, before_id=newest[-1].id, limit=2
        )
        oldest = repos.applications.events(
            application.id, newest_first=True, before_id=older[-1].id, limit=2
        )
    assert [event.message for event in newest] == ["4", "3"]
    assert [event.message for event in older] == ["2", "1"]
    assert [event.message for event in oldest] == ["0"]


def report(sequence: int, kind: str = "progress", **fields: Any) -> dict[str, Any]:
    """A runner event as ``HttpReporter`` sends it."""
    return {"type": kind, "sequence": sequence, "id": "query-1", **fields}


def test_progress_ignores_events_it_already_has(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        add = repos.applications.add_progress
        assert add(application.id, attempt=1, events=[report(0), report(1)], at=clock.now()) == 2
        resent = [report(1), report(2, "idle"), report(2, "idle")]
        assert add(application.id, attempt=1, events=resent, at=clock.now()) == 1
        assert add(application.id, attempt=2, events=[report(0, "started")], at=clock.now()) == 1
        assert add(application.id, attempt=2, events=[], at=clock.now()) == 0
    with store.transaction() as repos:
        stored = repos.applications.progress(application.id)
    assert [(p.attempt, p.sequence, p.type) for p in stored] == [
        (1, 0, "progress"),
        (1, 1, "progress"),
        (1, 2, "idle"),
        (2, 0, "started"),
    ]
    assert stored[2].payload == report(2, "idle")
    assert {p.query_id for p in stored} == {"query-1"}


def test_progress_keeps_only_each_applications_newest_events(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    neighbour = add_application("payments")
    with store.transaction() as repos:
        add = repos.applications.add_progress
        add(neighbour.id, attempt=1, events=[report(n) for n in range(3)], at=clock.now())
        add(application.id, attempt=1, events=[report(n) for n in range(4)], at=clock.now())
        added = add(
            application.id,
            attempt=1,
            events=[report(n) for n in range(4, 8)],
            at=clock.now(),
            keep_last=5,
        )
    with store.transaction() as repos:
        kept = repos.applications.progress(application.id)
        newest_two = repos.applications.progress(application.id, limit=2)
        untouched = repos.applications.progress(neighbour.id)
    assert added == 4
    assert [p.sequence for p in kept] == [3, 4, 5, 6, 7]
    assert [p.sequence for p in newest_two] == [6, 7]
    assert [p.sequence for p in untouched] == [0, 1, 2]


def test_progress_is_dated_by_the_events_own_time_when_it_has_one(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    reported = datetime(2025, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=2)))
    events = [
        report(0, timestamp=reported.isoformat(), queryId="query-2"),
        report(1, timestamp="2025-12-31T23:00:00"),
        report(2, timestamp="yesterday"),
        {"type": "heartbeat", "sequence": 3},
    ]
    with store.transaction() as repos:
        repos.applications.add_progress(application.id, attempt=1, events=events, at=clock.now())
        stored = repos.applications.progress(application.id)
    assert [p.at for p in stored] == [reported, clock.now(), clock.now(), clock.now()]
    assert stored[0].at.tzinfo is UTC
    assert [p.query_id for p in stored] == ["query-2", "query-1", "query-1", None]


def test_executor_figures_are_replaced_by_each_snapshot(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        assert repos.applications.executor_figures(application.id) is None
        repos.applications.set_executor_figures(
            application.id, at=clock.now(), figures={"executors": [{"id": "1"}]}
        )
        clock.advance(5)
        latest = repos.applications.set_executor_figures(
            application.id, at=clock.now(), figures={"executors": [{"id": "2"}], "active": 1}
        )
        with pytest.raises(NotFound, match="application 'app-000000000000'"):
            repos.applications.set_executor_figures("app-000000000000", at=clock.now(), figures={})
    with store.transaction() as repos:
        assert repos.applications.executor_figures(application.id) == latest
    assert latest.figures == {"executors": [{"id": "2"}], "active": 1}
    assert latest.at == clock.now()


def test_timestamps_come_back_aware_in_utc(store: Store, add_application: AddApplication) -> None:
    moment = datetime(2026, 3, 1, 7, 30, 15, 123456, tzinfo=timezone(timedelta(hours=-5)))
    application = add_application("orders", at=moment)
    change(store, application, moment, state=AppState.RUNNING, running_since=moment)
    with store.transaction() as repos:
        repos.applications.add_attempt(application.id, number=1, submitted_at=moment, directory="/")
        repos.applications.update_attempt(application.id, 1, running_at=moment, ended_at=moment)
        repos.applications.add_event(application.id, at=moment, kind="submitted", message="")
        repos.applications.set_executor_figures(application.id, at=moment, figures={})
    with store.transaction() as repos:
        stored = repos.applications.get(application.id)
        attempt = repos.applications.attempts(application.id)[0]
        stamps = [
            stored.created_at,
            stored.transition_time,
            stored.last_update_time,
            stored.running_since,
            attempt.submitted_at,
            attempt.running_at,
            attempt.ended_at,
            repos.applications.events(application.id)[0].at,
            repos.applications.executor_figures(application.id).at,  # type: ignore[union-attr]
        ]
    for stamp in stamps:
        assert stamp is not None
        assert (stamp.tzinfo, stamp) == (UTC, moment)


def test_deleting_an_application_deletes_its_history(
    store: Store,
    add_application: AddApplication,
    clock: FakeClock,
    engine: Engine,
    count_rows: CountRows,
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        repos.applications.add_attempt(
            application.id, number=1, submitted_at=clock.now(), directory="/"
        )
        repos.applications.add_event(application.id, at=clock.now(), kind="submitted", message="")
        repos.applications.add_progress(
            application.id, attempt=1, events=[report(0)], at=clock.now()
        )
        repos.applications.set_executor_figures(application.id, at=clock.now(), figures={})
    with engine.begin() as connection:
        connection.execute(delete(ApplicationRow))
    history_tables = (
        ApplicationAttemptRow,
        ApplicationEventRow,
        ApplicationProgressRow,
        ApplicationExecutorsRow,
    )
    assert [count_rows(table) for table in history_tables] == [0, 0, 0, 0]
