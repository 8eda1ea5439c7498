"""Fixtures of the store suite: every test runs once on SQLite and once on a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Protocol

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import DeclarativeBase

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord, JobRecord, Store, create_engine_for, migrate


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on the database, migrated to the newest schema."""
    engine = create_engine_for(database_url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def store(engine: Engine) -> Iterator[Store]:
    """The store over the migrated database, on each backend."""
    store = Store(engine)
    yield store
    store.close()


@pytest.fixture
def clock() -> FakeClock:
    """The time the tests write with; it moves only when a test advances it."""
    return FakeClock()


class NewJob(Protocol):
    def __call__(self, name: str, **overrides: Any) -> dict[str, Any]: ...


class AddJob(Protocol):
    def __call__(self, name: str, **overrides: Any) -> JobRecord: ...


class CountRows(Protocol):
    def __call__(self, table: type[DeclarativeBase]) -> int: ...


@pytest.fixture
def new_job(clock: FakeClock) -> NewJob:
    """The keyword arguments of ``JobRepository.add`` for a small job; keywords override them."""

    def fields(name: str, **overrides: Any) -> dict[str, Any]:
        defaults = {
            "name": name,
            "namespace": "default",
            "description": f"the {name} job",
            "bundle": "default",
            "manifest": {"metadata": {"name": name}, "spec": {"bundle": "default"}},
            "tags": {},
            "actor": "alice",
            "at": clock.now(),
        }
        return defaults | overrides

    return fields


@pytest.fixture
def add_job(store: Store, new_job: NewJob) -> AddJob:
    """Store a job in a transaction of its own (see ``new_job`` for the keywords)."""

    def add(name: str, **overrides: Any) -> JobRecord:
        with store.transaction() as repos:
            return repos.jobs.add(**new_job(name, **overrides))

    return add


@pytest.fixture
def count_rows(engine: Engine) -> CountRows:
    """How many rows a table holds, read outside any repository."""

    def count(table: type[DeclarativeBase]) -> int:
        with engine.connect() as connection:
            return connection.scalar(select(func.count()).select_from(table)) or 0

    return count


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
