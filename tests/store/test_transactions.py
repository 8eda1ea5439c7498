"""Transactions: all of a transaction's writes land, or none do, even when two race for one job."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Conflict
from streamjobs.store import Store
from streamjobs.store.tables import AuditEntryRow, JobRow, JobTagRow
from tests.store.conftest import AddJob, CountRows, NewJob


class DeliberateError(Exception):
    """Raised on purpose in the middle of a transaction."""


def test_a_transaction_that_raises_leaves_nothing_behind(
    store: Store, new_job: NewJob, clock: FakeClock, count_rows: CountRows
) -> None:
    def add_job_and_audit_then_fail() -> None:
        with store.transaction() as repos:
            repos.jobs.add(**new_job("half", tags={"team": "payments"}))
            repos.audit.append(
                at=clock.now(),
                actor="alice",
                action="job.created",
                resource_kind="job",
                resource_name="half",
                detail={},
                source="api",
            )
            raise DeliberateError

    with pytest.raises(DeliberateError):
        add_job_and_audit_then_fail()
    assert [count_rows(table) for table in (JobRow, JobTagRow, AuditEntryRow)] == [0, 0, 0]


def test_reading_sees_what_transactions_committed(store: Store, add_job: AddJob) -> None:
    with store.reading() as repos:
        assert repos.jobs.find("orders") is None
    add_job("orders", tags={"team": "payments"})
    with store.reading() as repos:
        found = repos.jobs.find("orders")
        listed, total = repos.jobs.list()
    assert found is not None
    assert found.tags == {"team": "payments"}
    assert ([job.name for job in listed], total) == (["orders"], 1)


def test_a_write_made_while_reading_never_lands(
    store: Store, engine: Engine, new_job: NewJob, count_rows: CountRows
) -> None:
    # PostgreSQL refuses it at once; SQLite's reading transaction is rolled back when it ends
    with contextlib.ExitStack() as refusal:
        if engine.dialect.name == "postgresql":
            refusal.enter_context(pytest.raises(DBAPIError, match="read-only transaction"))
        with store.reading() as repos:
            repos.jobs.add(**new_job("sneaked"))
    assert count_rows(JobRow) == 0


def test_an_update_that_raises_afterwards_is_rolled_back(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    def update_then_fail() -> None:
        with store.transaction() as repos:
            repos.jobs.update(
                "orders",
                expected_version=1,
                manifest={"changed": True},
                description="changed",
                bundle="other",
                tags={},
                actor="bob",
                at=clock.now(),
            )
            raise DeliberateError

    before = add_job("orders", tags={"team": "payments"})
    with pytest.raises(DeliberateError):
        update_then_fail()
    with store.transaction() as repos:
        assert repos.jobs.get("orders") == before


def contested_manifest(writer: str) -> dict[str, Any]:
    """A manifest of several parts, each naming its writer, so a mix would show."""
    return {
        "metadata": {"name": "contested", "description": writer},
        "spec": {"bundle": "default", "steps": [f"{writer}-{step}" for step in range(3)]},
        "writer": writer,
    }


def test_of_two_concurrent_updates_one_wins_whole_and_the_other_conflicts(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    add_job("contested", tags={"writer": "nobody"})
    both_have_read = threading.Barrier(2, timeout=30)

    def update_as(writer: str) -> str:
        try:
            with store.transaction() as repos:
                job = repos.jobs.get("contested")
                both_have_read.wait()
                repos.jobs.update(
                    "contested",
                    expected_version=job.version,
                    manifest=contested_manifest(writer),
                    description=writer,
                    bundle="default",
                    tags={"writer": writer},
                    actor=writer,
                    at=clock.now(),
                )
                repos.audit.append(
                    at=clock.now(),
                    actor=writer,
                    action="job.configured",
                    resource_kind="job",
                    resource_name="contested",
                    detail={"writer": writer},
                    source=None,
                )
        except Conflict:
            return "conflict"
        return "won"

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = dict(zip(["ann", "ben"], pool.map(update_as, ["ann", "ben"]), strict=True))

    assert sorted(outcomes.values()) == ["conflict", "won"]
    winner = next(writer for writer, outcome in outcomes.items() if outcome == "won")
    with store.transaction() as repos:
        job = repos.jobs.get("contested")
        audit = repos.audit.list()
    assert job.version == 2
    assert job.manifest == contested_manifest(winner)
    assert (job.description, job.tags, job.updated_by) == (winner, {"writer": winner}, winner)
    assert [(entry.actor, entry.detail) for entry in audit] == [(winner, {"writer": winner})]
