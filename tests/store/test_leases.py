"""The supervisor's lease and its fencing token, on SQLite and on a real PostgreSQL: taken when
free or run out, renewed only under the same token, a token raised at every take, and writes
fenced by an old token refused with nothing written. On PostgreSQL, a fenced transaction in
flight holds a takeover back until it ends, and a stopped one does not hold it forever."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, text, update

from streamjobs.domain.errors import StoreUnavailable
from streamjobs.store import Store
from streamjobs.store.lease_tables import SupervisorLeaseRow
from streamjobs.store.leases import SUPERVISOR_LEASE, Fenced, Leader
from streamjobs.store.tables import JobRow
from tests.store.conftest import CountRows, NewJob

LEASE = SUPERVISOR_LEASE
WAIT = 10.0
"""How long a lease change waits for locks, where the test does not mean it to wait."""


def acquire(store: Store, holder: str, *, seconds: float = 60.0) -> int | None:
    with store.transaction() as repos:
        return repos.leases.acquire(
            LEASE, holder, f"http://{holder}:8040", seconds, wait_seconds=WAIT
        )


def renew(store: Store, holder: str, token: int) -> bool:
    with store.transaction() as repos:
        return repos.leases.renew(LEASE, holder, token, 60.0, wait_seconds=WAIT)


def run_out(engine: Engine) -> None:
    """Let the lease's time pass: as if its holder had not renewed it for a while."""
    with engine.begin() as connection:
        connection.execute(
            update(SupervisorLeaseRow)
            .where(SupervisorLeaseRow.name == LEASE)
            .values(expires_at=datetime(2020, 1, 1, tzinfo=UTC))
        )


def test_the_first_server_takes_the_lease_and_others_wait(store: Store) -> None:
    with store.reading() as repos:
        assert repos.leases.current(LEASE) is None

    assert acquire(store, "alpha") == 1
    assert acquire(store, "beta") is None

    with store.reading() as repos:
        held = repos.leases.current(LEASE)
    assert held is not None
    assert (held.holder, held.holder_url, held.token, held.expired) == (
        "alpha",
        "http://alpha:8040",
        1,
        False,
    )
    assert held.leader == Leader("alpha", "http://alpha:8040")
    assert held.acquired_at is not None
    assert held.expires_at is not None
    assert held.expires_at > held.acquired_at


def test_renewal_holds_only_under_the_same_token(store: Store) -> None:
    token = acquire(store, "alpha")
    assert token == 1
    assert renew(store, "alpha", token)
    assert not renew(store, "alpha", token + 1)
    assert not renew(store, "beta", token)


def test_a_lease_that_ran_out_is_taken_over_with_a_new_token(store: Store, engine: Engine) -> None:
    assert acquire(store, "alpha") == 1
    run_out(engine)
    with store.reading() as repos:
        expired = repos.leases.current(LEASE)
    assert expired is not None
    assert expired.expired
    assert expired.leader is None

    assert acquire(store, "beta") == 2
    assert not renew(store, "alpha", 1), "the former leader cannot renew what it lost"
    assert acquire(store, "alpha") is None
    with store.reading() as repos:
        held = repos.leases.current(LEASE)
    assert held is not None
    assert (held.holder, held.token, held.expired) == ("beta", 2, False)


def test_a_server_of_the_same_name_waits_as_any_other(store: Store, engine: Engine) -> None:
    assert acquire(store, "alpha") == 1
    assert acquire(store, "alpha") is None, "its earlier life, or a namesake, holds it"
    assert renew(store, "alpha", 1)
    run_out(engine)
    assert acquire(store, "alpha") == 2
    assert not renew(store, "alpha", 1)


def test_a_released_lease_is_free_at_once_and_keeps_its_token(store: Store) -> None:
    assert acquire(store, "alpha") == 1
    with store.transaction() as repos:
        assert not repos.leases.release(LEASE, "alpha", 7)
        assert repos.leases.release(LEASE, "alpha", 1)
    with store.reading() as repos:
        released = repos.leases.current(LEASE)
    assert released is not None
    assert (released.holder, released.token, released.expired) == (None, 1, True)
    assert acquire(store, "beta") == 2


def test_seizing_takes_the_lease_from_whoever_holds_it(store: Store) -> None:
    assert acquire(store, "alpha") == 1
    with store.transaction() as repos:
        assert repos.leases.seize(LEASE, "beta", "http://beta:8040", 60.0) == 2
    assert not renew(store, "alpha", 1)


def test_a_fenced_write_lands_while_its_token_holds(
    store: Store, new_job: NewJob, count_rows: CountRows
) -> None:
    token = acquire(store, "alpha")
    assert token is not None
    with store.fenced(token, hold_limit_seconds=WAIT), store.transaction() as repos:
        repos.jobs.add(**new_job("orders"))
    assert count_rows(JobRow) == 1


def test_a_fenced_write_after_a_takeover_is_refused_and_writes_nothing(
    store: Store,
    engine: Engine,
    new_job: NewJob,
    count_rows: CountRows,
    caplog: pytest.LogCaptureFixture,
) -> None:
    old = acquire(store, "alpha")
    assert old is not None
    run_out(engine)
    assert acquire(store, "beta") == 2

    with (
        caplog.at_level(logging.WARNING, logger="streamjobs.store.leases"),
        store.fenced(old, hold_limit_seconds=WAIT) as fence,
    ):
        with pytest.raises(Fenced) as refused, store.transaction() as repos:
            repos.jobs.add(**new_job("orders"))
        with pytest.raises(Fenced), store.transaction() as repos:
            repos.jobs.add(**new_job("payments"))
    assert count_rows(JobRow) == 0
    assert "beta (http://beta:8040) holds it under token 2" in refused.value.detail
    assert fence.refusal is not None
    assert caplog.text.count("a write was refused because another server leads now") == 1, (
        "said once; the fence refuses its later writes without asking again"
    )
    # Outside the fence, writes go on as before.
    with store.transaction() as repos:
        repos.jobs.add(**new_job("payments"))
    assert count_rows(JobRow) == 1


def test_a_fence_applies_to_its_own_store_only(
    store: Store, engine: Engine, new_job: NewJob, count_rows: CountRows
) -> None:
    acquire(store, "alpha")
    other = Store(engine)
    try:
        with other.fenced(99, hold_limit_seconds=WAIT), store.transaction() as repos:
            repos.jobs.add(**new_job("orders"))
        with other.fenced(99, hold_limit_seconds=WAIT), pytest.raises(Fenced), other.transaction():
            pass
    finally:
        other.close()
    assert count_rows(JobRow) == 1


# PostgreSQL only: the fenced transaction's share lock on the lease row.


@pytest.fixture
def postgres_store(postgres_url: str) -> Iterator[Store]:
    store = Store.open(postgres_url)
    yield store
    store.close()


def waiting_on_a_lock(store: Store) -> bool:
    with store.engine.connect() as connection:
        waiting = connection.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
    return bool(waiting)


def eventually(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"waited 30 s for {what}"
        time.sleep(0.05)


class FencedTransaction(threading.Thread):
    """A fenced transaction held open until ``finish`` is set, then writing a job."""

    def __init__(self, store: Store, token: int, job: dict[str, object], *, idle_limit: float):
        super().__init__(daemon=True)
        self.store, self.token, self.job, self.idle_limit = store, token, job, idle_limit
        self.opened, self.finish = threading.Event(), threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with (
                self.store.fenced(self.token, hold_limit_seconds=self.idle_limit),
                self.store.transaction() as repos,
            ):
                self.opened.set()
                self.finish.wait(60)
                repos.jobs.add(**self.job)
        except BaseException as error:
            self.error = error
        finally:
            self.opened.set()


class Takeover(threading.Thread):
    def __init__(self, store: Store, *, wait_seconds: float) -> None:
        super().__init__(daemon=True)
        self.store, self.wait_seconds = store, wait_seconds
        self.token: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.store.transaction() as repos:
                self.token = repos.leases.acquire(
                    LEASE, "beta", "http://beta:8040", 60.0, wait_seconds=self.wait_seconds
                )
        except BaseException as error:
            self.error = error


@pytest.mark.postgres
def test_a_takeover_waits_for_the_fenced_transaction_in_flight(
    postgres_store: Store, new_job: NewJob
) -> None:
    store = postgres_store
    old = acquire(store, "alpha")
    assert old is not None
    run_out(store.engine)  # the row is share-locked once the fenced transaction is open
    in_flight = FencedTransaction(store, old, new_job("orders"), idle_limit=60)
    in_flight.start()
    assert in_flight.opened.wait(30)

    takeover = Takeover(store, wait_seconds=60)
    takeover.start()
    eventually("the takeover to wait on the lease row's lock", lambda: waiting_on_a_lock(store))
    assert takeover.is_alive()

    in_flight.finish.set()
    in_flight.join(30)
    takeover.join(30)
    assert in_flight.error is None, "the write began under its token, and lands"
    assert (takeover.error, takeover.token) == (None, 2)
    with store.reading() as repos:
        assert repos.jobs.find("orders") is not None


@pytest.mark.postgres
def test_a_takeover_gives_up_waiting_after_its_limit_and_tries_again_later(
    postgres_store: Store, new_job: NewJob
) -> None:
    store = postgres_store
    old = acquire(store, "alpha")
    assert old is not None
    run_out(store.engine)  # the row is share-locked once the fenced transaction is open
    in_flight = FencedTransaction(store, old, new_job("orders"), idle_limit=60)
    in_flight.start()
    assert in_flight.opened.wait(30)

    with pytest.raises(StoreUnavailable, match="lock"), store.transaction() as repos:
        repos.leases.acquire(LEASE, "beta", "http://beta:8040", 60.0, wait_seconds=0.2)

    in_flight.finish.set()
    in_flight.join(30)
    assert acquire(store, "beta") == 2


@pytest.mark.postgres
def test_a_stopped_fenced_transaction_does_not_hold_the_takeover_forever(
    postgres_store: Store, new_job: NewJob
) -> None:
    store = postgres_store
    old = acquire(store, "alpha")
    assert old is not None
    run_out(store.engine)
    stopped = FencedTransaction(store, old, new_job("orders"), idle_limit=0.5)
    stopped.start()
    assert stopped.opened.wait(30)

    takeover = Takeover(store, wait_seconds=60)
    takeover.start()
    takeover.join(60)
    assert (takeover.error, takeover.token) == (None, 2), "the database ended the idle one"

    stopped.finish.set()  # it wakes up and tries to write
    stopped.join(30)
    assert isinstance(stopped.error, StoreUnavailable)
    with store.reading() as repos:
        assert repos.jobs.find("orders") is None
