"""Storage errors that are no bug of the server answer 503, never 500 (issue 20 review, item 3):
every pooled connection in use, a deadlock or a serialization failure PostgreSQL broke by
rolling a transaction back, a statement cancelled. A transaction rolled back for contention wrote
nothing, so ``retried_on_contention`` runs it again before giving up."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from streamjobs.domain.errors import StoreUnavailable
from streamjobs.store import Store, create_engine_for, migrate
from streamjobs.store.outages import (
    StoreContention,
    retried_on_contention,
    translated_outages,
)


@pytest.fixture
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine_for(postgres_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER)"))
        connection.execute(text("INSERT INTO counters VALUES (1, 0), (2, 0)"))
    yield engine
    engine.dispose()


def test_a_pool_without_a_free_connection_is_unavailable_not_an_error(tmp_path: Path) -> None:
    engine = create_engine(
        f"sqlite:///{tmp_path / 'streamjobs.db'}", pool_size=1, max_overflow=0, pool_timeout=0.05
    )
    migrate(engine)
    store = Store(engine)
    held = engine.connect()
    try:
        with (
            pytest.raises(StoreUnavailable, match="every connection") as raised,
            store.transaction() as repos,
        ):
            repos.jobs.find("orders")
        assert raised.value.retry_after_seconds > 0
    finally:
        held.close()
    with store.transaction() as repos:  # and it recovers once a connection is free
        assert repos.jobs.find("orders") is None
    store.close()


@pytest.mark.postgres
def test_a_serialization_failure_is_contention(postgres_engine: Engine) -> None:
    with postgres_engine.connect() as first, postgres_engine.connect() as second:
        first.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
        first.execute(text("SELECT n FROM counters WHERE id = 1"))
        second.execute(text("UPDATE counters SET n = n + 1 WHERE id = 1"))
        second.commit()
        with (
            pytest.raises(StoreContention, match="serialization failure") as raised,
            translated_outages(),
        ):
            first.execute(text("UPDATE counters SET n = n + 1 WHERE id = 1"))
        first.rollback()
    assert raised.value.retry_after_seconds >= 1


@pytest.mark.postgres
def test_a_deadlock_is_contention(postgres_engine: Engine) -> None:
    caught: list[BaseException] = []
    both_hold_one = threading.Barrier(2)

    def lock_in_order(first_id: int, second_id: int) -> None:
        with postgres_engine.connect() as connection:
            try:
                with translated_outages():
                    connection.execute(text("SET deadlock_timeout = '50ms'"))
                    update = text("UPDATE counters SET n = n + 1 WHERE id = :id")
                    connection.execute(update, {"id": first_id})
                    both_hold_one.wait()
                    connection.execute(update, {"id": second_id})
                    connection.commit()
            except StoreUnavailable as error:
                caught.append(error)
                connection.rollback()

    threads = [
        threading.Thread(target=lock_in_order, args=(1, 2)),
        threading.Thread(target=lock_in_order, args=(2, 1)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(caught) == 1
    assert isinstance(caught[0], StoreContention)
    assert "deadlock" in caught[0].detail


@pytest.mark.postgres
def test_a_cancelled_statement_is_unavailable(postgres_engine: Engine) -> None:
    with postgres_engine.connect() as connection:
        connection.execute(text("SET statement_timeout = '20ms'"))
        with (
            pytest.raises(StoreUnavailable, match="cancelled") as raised,
            translated_outages(),
        ):
            connection.execute(text("SELECT pg_sleep(5)"))
        connection.rollback()
    assert not isinstance(raised.value, StoreContention)


def test_contention_runs_the_change_again() -> None:
    calls: list[int] = []

    def change() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StoreContention("rolled back (a deadlock)", retry_after_seconds=1)
        return "done"

    assert retried_on_contention(change, attempts=3) == "done"
    assert len(calls) == 3


def test_contention_that_persists_ends_in_503() -> None:
    calls: list[int] = []

    def change() -> str:
        calls.append(1)
        raise StoreContention("rolled back (a deadlock)", retry_after_seconds=1)

    with pytest.raises(StoreContention):
        retried_on_contention(change, attempts=3)
    assert len(calls) == 3


def test_other_outages_are_not_run_again() -> None:
    calls: list[int] = []

    def change() -> str:
        calls.append(1)
        raise StoreUnavailable("the store's disk is full", retry_after_seconds=60)

    with pytest.raises(StoreUnavailable):
        retried_on_contention(change)
    assert len(calls) == 1
