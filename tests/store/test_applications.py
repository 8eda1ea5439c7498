"""Applications in the store: run numbers, one live application per job, lists, versioned updates,
and their attempts, events, progress and executor figures."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Protocol

import pytest
from sqlalchemy import Engine, delete

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord, ApplicationRepository, Store
from streamjobs.store.tables import (
    ApplicationAttemptRow,
    ApplicationEventRow,
    ApplicationExecutorsRow,
    ApplicationProgressRow,
    ApplicationRow,
)
from tests.store.conftest import AddJob, CountRows

SPEC = {"metadata": {"name": "orders"}, "spec": {"pipeline": {"inputs": [{"name": "in"}]}}}


class AddApplication(Protocol):
    def __call__(self, job_name: str, **overrides: Any) -> ApplicationRecord: ...


@pytest.fixture
def add_application(store: Store, clock: FakeClock) -> AddApplication:
    """Store an application of ``job_name`` in a transaction of its own; keywords override."""

    def add(job_name: str, **overrides: Any) -> ApplicationRecord:
        fields: dict[str, Any] = {
            "job_name": job_name,
            "namespace": "default",
            "bundle": "default",
            "tags": {},
            "spec": SPEC,
            "state": AppState.STARTING,
            "triggered_by": "alice",
            "run_as": "alice",
            "at": clock.now(),
        }
        with store.transaction() as repos:
            return repos.applications.add(**(fields | overrides))

    return add


def change(
    store: Store, application: ApplicationRecord, at: datetime, **changes: Any
) -> ApplicationRecord:
    """Update the application as the version it was read at."""
    with store.transaction() as repos:
        return repos.applications.update(
            application.id, version=application.version, at=at, **changes
        )


def finish(store: Store, application: ApplicationRecord, clock: FakeClock) -> ApplicationRecord:
    """Move the application to FAILED, so its job may have another live one."""
    return change(store, application, clock.now(), state=AppState.FAILED)


def test_an_added_application_reads_back_whole_at_version_1(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    added = add_application(
        "orders", tags={"team": "payments"}, namespace="sales", token_hash="f" * 64
    )
    with store.transaction() as repos:
        application = repos.applications.get(added.id)
        spec = repos.applications.spec(added.id)
    assert application == added
    assert re.fullmatch(r"app-[0-9a-f]{12}", application.id)
    assert (application.name, application.run_number, application.job_name) == (
        "orders-1",
        1,
        "orders",
    )
    assert (application.namespace, application.bundle) == ("sales", "default")
    assert (application.tags, spec) == ({"team": "payments"}, SPEC)
    assert (application.state, application.version) == (AppState.STARTING, 1)
    assert (application.triggered_by, application.run_as) == ("alice", "alice")
    assert application.created_at == application.transition_time == clock.now()
    assert application.last_update_time == clock.now()
    counters = (
        application.submission_attempts,
        application.execution_attempts,
        application.restarts,
        application.submission_failures,
        application.execution_failures,
        application.executors_running,
        application.executors_pending,
    )
    assert counters == (0, 0, 0, 0, 0, 0, 0)
    assert application.latest == {}
    assert application.token_hash == "f" * 64
    assert "f" * 64 not in repr(application)


def test_a_missing_application_is_none_for_find_and_not_found_for_get(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.applications.find("app-000000000000") is None
        with pytest.raises(NotFound, match="application 'app-000000000000' does not exist"):
            repos.applications.get("app-000000000000")


def test_run_numbers_count_each_jobs_applications_from_1(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    finish(store, add_application("orders"), clock)
    finish(store, add_application("orders"), clock)
    payments = add_application("payments")
    third = add_application("orders")
    assert (payments.name, payments.run_number) == ("payments-1", 1)
    assert (third.name, third.run_number) == ("orders-3", 3)


def test_a_job_has_at_most_one_live_application(
    store: Store, add_application: AddApplication, clock: FakeClock, count_rows: CountRows
) -> None:
    first = add_application("orders")
    with pytest.raises(Conflict) as refused:
        add_application("orders")
    assert refused.value.detail == (
        f"job 'orders' already has a live application orders-1 ({first.id}) in state STARTING"
    )
    assert count_rows(ApplicationRow) == 1
    finish(store, first, clock)
    second = add_application("orders")
    assert second.name == "orders-2"
    with store.transaction() as repos:
        assert repos.applications.live_for_job("orders") == second


def test_a_suspended_application_is_still_the_jobs_live_one(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    suspended = change(store, add_application("orders"), clock.now(), state=AppState.SUSPENDED)
    with pytest.raises(Conflict, match=r"orders-1 .* in state SUSPENDED"):
        add_application("orders")
    with store.transaction() as repos:
        assert repos.applications.live_for_job("orders") == suspended


def test_no_application_is_added_beside_a_live_one_even_a_finished_one(
    add_application: AddApplication,
) -> None:
    add_application("orders")
    with pytest.raises(Conflict, match="job 'orders' already has a live application orders-1"):
        add_application("orders", state=AppState.COMPLETED)


def test_the_database_refuses_a_second_live_application_that_slips_past_the_check(
    store: Store,
    add_application: AddApplication,
    count_rows: CountRows,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    add_application("orders")
    # as if another transaction added a live application between our look-up and our insert
    monkeypatch.setattr(ApplicationRepository, "live_for_job", lambda self, job_name: None)
    with pytest.raises(Conflict, match="job 'orders' got another application"):
        add_application("orders")
    assert count_rows(ApplicationRow) == 1


def test_of_two_concurrent_runs_of_a_job_exactly_one_is_added(
    add_application: AddApplication, count_rows: CountRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    both_have_looked = threading.Barrier(2, timeout=30)
    look_up = ApplicationRepository.live_for_job

    def look_up_then_wait(self: ApplicationRepository, job_name: str) -> ApplicationRecord | None:
        live = look_up(self, job_name)
        both_have_looked.wait()
        return live

    monkeypatch.setattr(ApplicationRepository, "live_for_job", look_up_then_wait)

    def run(_: int) -> str:
        try:
            add_application("orders")
        except Conflict:
            return "conflict"
        return "added"

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = sorted(pool.map(run, range(2)))
    assert outcomes == ["added", "conflict"]
    assert count_rows(ApplicationRow) == 1


def test_an_application_outlives_its_job(store: Store, add_application: AddApplication) -> None:
    application = add_application("never-stored-as-a-job")
    with store.transaction() as repos:
        assert repos.jobs.find("never-stored-as-a-job") is None
        assert repos.applications.get(application.id) == application


@pytest.fixture
def history(store: Store, add_application: AddApplication, clock: FakeClock) -> dict[str, str]:
    """Five applications of three jobs, one minute apart, by name to id."""
    added: list[ApplicationRecord] = []
    runs: list[tuple[str, dict[str, Any]]] = [
        ("alpha", {"tags": {"team": "payments", "app.kubernetes.io/tier": "gold"}}),
        ("beta", {"triggered_by": "supervisor", "tags": {"team": "search"}}),
        ("alpha", {"tags": {"team": "payments", "tier": ""}}),
        ("Gamma_1", {"triggered_by": "bob"}),
        ("beta", {}),
    ]
    for job_name, fields in runs:
        previous = next((a for a in reversed(added) if a.job_name == job_name), None)
        if previous is not None:
            finish(store, previous, clock)
        added.append(add_application(job_name, **fields))
        clock.advance(60)
    return {application.name: application.id for application in added}


def listed(store: Store, **filters: Any) -> tuple[list[str], int]:
    """The names ``list`` returns for ``filters``, and the total it gives for them."""
    with store.transaction() as repos:
        page, total = repos.applications.list(**filters)
        return [application.name for application in page], total


@pytest.mark.usefixtures("history")
@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ({}, ["beta-2", "Gamma_1-1", "alpha-2", "beta-1", "alpha-1"]),
        ({"job_name": "alpha"}, ["alpha-2", "alpha-1"]),
        ({"states": [AppState.STARTING]}, ["beta-2", "Gamma_1-1", "alpha-2"]),
        ({"states": [AppState.FAILED, AppState.RUNNING]}, ["beta-1", "alpha-1"]),
        ({"states": []}, []),
        ({"triggered_by": "supervisor"}, ["beta-1"]),
        ({"tag": ("team", None)}, ["alpha-2", "beta-1", "alpha-1"]),
        ({"tag": ("team", "payments")}, ["alpha-2", "alpha-1"]),
        ({"tag": ("app.kubernetes.io/tier", "gold")}, ["alpha-1"]),
        ({"tag": ("tier", "")}, ["alpha-2"]),
        ({"tag": ("tier", None)}, ["alpha-2"]),
        ({"tag": ("owner", None)}, []),
        ({"tag": ('te"am', None)}, []),
        ({"search": "GAMMA"}, ["Gamma_1-1"]),
        ({"search": "a-2"}, ["beta-2", "alpha-2"]),
        ({"search": "_"}, ["Gamma_1-1"]),
        ({"search": "%"}, []),
        ({"search": "/"}, []),
        ({"bundles": []}, []),
        ({"bundles": ["default"], "job_name": "beta"}, ["beta-2", "beta-1"]),
        ({"job_name": "alpha", "tag": ("tier", None), "states": [AppState.STARTING]}, ["alpha-2"]),
    ],
)
def test_list_and_count_filter_by_job_state_trigger_tag_and_name(
    store: Store, filters: dict[str, Any], names: list[str]
) -> None:
    assert listed(store, **filters) == (names, len(names))


def test_search_matches_any_part_of_the_id_ignoring_case(
    store: Store, history: dict[str, str]
) -> None:
    hex_part = history["beta-1"].removeprefix("app-")
    assert listed(store, search=hex_part.upper()) == (["beta-1"], 1)


@pytest.mark.usefixtures("history")
def test_list_pages_newest_first(store: Store) -> None:
    assert listed(store, limit=2) == (["beta-2", "Gamma_1-1"], 5)
    assert listed(store, limit=2, offset=2) == (["alpha-2", "beta-1"], 5)
    assert listed(store, limit=2, offset=4) == (["alpha-1"], 5)
    assert listed(store, limit=2, offset=10) == ([], 5)
    assert listed(store, job_name="ghost") == ([], 0)
    assert listed(store, job_name="beta", limit=1, offset=1) == (["beta-1"], 2)


def test_jobs_are_read_with_their_newest_application(
    store: Store, history: dict[str, str], add_job: AddJob
) -> None:
    for name in ("alpha", "beta", "never-ran"):
        add_job(name)
    with store.transaction() as repos:
        rows, total = repos.jobs.list_with_latest()
        alpha, latest = repos.jobs.show("alpha")
        _, not_run = repos.jobs.show("never-ran")
    assert total == 3
    assert {job.name: run and run.name for job, run in rows} == {
        "alpha": "alpha-2",
        "beta": "beta-2",
        "never-ran": None,
    }
    assert (alpha.name, latest and latest.id, not_run) == ("alpha", history["alpha-2"], None)
    assert latest is not None
    assert latest.state is AppState.STARTING
    assert latest.created_at.tzinfo is not None


def test_supervised_are_the_active_applications_oldest_first(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    starting = add_application("starting")
    clock.advance(1)
    running = change(store, add_application("running"), clock.now(), state=AppState.RUNNING)
    change(store, add_application("suspended"), clock.now(), state=AppState.SUSPENDED)
    finish(store, add_application("failed"), clock)
    add_application("completed", state=AppState.COMPLETED)
    with store.transaction() as repos:
        assert repos.applications.supervised() == [starting, running]


def test_find_by_token_hash(store: Store, add_application: AddApplication) -> None:
    reporting = add_application("orders", token_hash="a" * 64)
    add_application("payments", token_hash="b" * 64)
    with store.transaction() as repos:
        assert repos.applications.find_by_token_hash("a" * 64) == reporting
        assert repos.applications.find_by_token_hash("c" * 64) is None


def test_update_changes_fields_bumps_the_version_and_stamps_the_last_update(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    added = add_application("orders")
    clock.advance(30)
    updated = change(
        store,
        added,
        clock.now(),
        submission_attempts=1,
        driver_state="RUNNING",
        exit_code=None,
        next_attempt_at=clock.now() + timedelta(seconds=10),
        latest={"inputRowsPerSecond": 12.5},
    )
    with store.transaction() as repos:
        assert repos.applications.get(added.id) == updated
    assert (updated.version, updated.submission_attempts, updated.driver_state) == (2, 1, "RUNNING")
    assert updated.latest == {"inputRowsPerSecond": 12.5}
    assert updated.next_attempt_at == clock.now() + timedelta(seconds=10)
    assert updated.last_update_time == clock.now()
    assert updated.transition_time == added.transition_time


def test_transition_time_moves_only_when_the_state_changes(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    added = add_application("orders")
    clock.advance(10)
    running = change(store, added, clock.now(), state=AppState.RUNNING)
    assert (running.state, running.transition_time) == (AppState.RUNNING, clock.now())
    clock.advance(10)
    still_running = change(store, running, clock.now(), state="RUNNING", executors_running=2)
    assert still_running.transition_time == running.transition_time
    assert still_running.last_update_time == clock.now()
    clock.advance(10)
    stopped = change(store, still_running, clock.now(), state=AppState.STOPPED)
    assert (stopped.state, stopped.transition_time) == (AppState.STOPPED, clock.now())
    with store.transaction() as repos:
        assert repos.applications.live_for_job("orders") is None


def test_an_update_based_on_an_old_version_is_a_conflict_and_changes_nothing(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    added = add_application("orders")
    current = change(store, added, clock.now(), restarts=1)
    with pytest.raises(Conflict) as conflict:
        change(store, added, clock.now(), restarts=5, state=AppState.ABORTED)
    assert "application 'orders-1'" in conflict.value.detail
    assert "version 1" in conflict.value.detail
    assert "version 2" in conflict.value.detail
    with store.transaction() as repos:
        assert repos.applications.get(added.id) == current


def test_an_application_cannot_become_a_jobs_second_live_one(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    failed = finish(store, add_application("orders"), clock)
    add_application("orders")
    with pytest.raises(Conflict, match="job 'orders' already has another live application"):
        change(store, failed, clock.now(), state=AppState.RUNNING)
    with store.transaction() as repos:
        assert repos.applications.get(failed.id) == failed


def test_update_refuses_fixed_fields_and_missing_applications(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    added = add_application("orders")
    with pytest.raises(TypeError, match="created_at, job_name cannot be changed"):
        change(store, added, clock.now(), job_name="other", created_at=clock.now())
    missing = "app-000000000000"
    with pytest.raises(NotFound, match=f"application '{missing}'"), store.transaction() as repos:
        repos.applications.update(missing, version=1, at=clock.now(), restarts=1)


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
