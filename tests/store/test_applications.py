"""Applications in the store: run numbers, one live application per job, and versioned updates.
Their lists are in ``test_application_lists.py``; their attempts, events, progress and executor
figures in ``test_application_history.py``."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.states import TERMINAL_STATES, AppState
from streamjobs.store import ApplicationRecord, ApplicationRepository, Store
from streamjobs.store.tables import (
    ApplicationRow,
)
from tests.store.conftest import SPEC, AddApplication, CountRows, change, finish


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


def test_find_by_token_hash(store: Store, add_application: AddApplication) -> None:
    reporting = add_application("orders", token_hash="a" * 64)
    add_application("payments", token_hash="b" * 64)
    with store.transaction() as repos:
        assert repos.applications.find_by_token_hash("a" * 64) == reporting
        assert repos.applications.find_by_token_hash("c" * 64) is None


@pytest.mark.parametrize("ending", sorted(TERMINAL_STATES))
def test_an_application_that_ends_loses_its_report_token(
    store: Store, add_application: AddApplication, clock: FakeClock, ending: AppState
) -> None:
    application = add_application("orders", token_hash="a" * 64)
    for state in (AppState.RUNNING, AppState.PENDING_RERUN, AppState.SUSPENDED):
        application = change(store, application, clock.now(), state=state)
        assert application.token_hash == "a" * 64, state
    ended = change(store, application, clock.now(), state=ending)
    assert ended.token_hash is None
    with store.transaction() as repos:
        assert repos.applications.find_by_token_hash("a" * 64) is None


def test_a_token_given_with_a_terminal_state_is_not_kept(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    ended = change(store, application, clock.now(), state=AppState.FAILED, token_hash="b" * 64)
    assert ended.token_hash is None


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
