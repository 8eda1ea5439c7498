"""Every transaction that writes both a job's row and one of its applications' takes the job's
first (issue 20 review, item 1): Run and Resume hold the job's row before they write an
application, so a move of the application's state (a person's Stop or Abort, the supervisor's
tick) taking the rows the other way round would wait for them while they wait for it, a deadlock
PostgreSQL breaks by failing one side (a 500).

On PostgreSQL the job's row is held from outside; a move of the application's state must then
wait for it before it locks the application's row, which another connection still gets at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import OperationalError

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.services.application_state import move
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings
from tests.factories import pipeline_manifest

pytestmark = pytest.mark.postgres

ADMIN = Actor(Principal("admin", is_admin=True))
LOCK_WAIT_SECONDS = 30.0


@pytest.fixture
def services(postgres_url: str, tmp_path: Path) -> Iterator[Services]:
    settings = Settings(home=tmp_path / "home", database_url=postgres_url)
    services = open_services(settings, clock=FakeClock())
    yield services
    services.store.close()


@pytest.fixture
def outside(postgres_url: str) -> Iterator[Callable[[], Connection]]:
    """Connections of another client of the database (not the store's pools)."""
    engine = create_engine(postgres_url)
    connections: list[Connection] = []

    def connect() -> Connection:
        connections.append(engine.connect())
        return connections[-1]

    yield connect
    for connection in connections:
        connection.close()
    engine.dispose()


def _supervisor_fails(services: Services, application_id: str) -> None:
    """What the supervisor does when an application's attempt fails for good."""
    with services.store.transaction() as repos:
        application = repos.applications.get(application_id)
        move(repos, application, AppEvent.FAILED, at=FakeClock().now())


MOVES: dict[str, Callable[[Services, str], object]] = {
    "stop": lambda services, _: services.applications.stop("orders", actor=ADMIN),
    "abort": lambda services, app: services.applications.abort(app, actor=ADMIN),
    "supervisor": _supervisor_fails,
}


@pytest.mark.parametrize("kind", sorted(MOVES))
def test_a_state_move_waits_for_the_jobs_row_before_it_locks_the_applications(
    services: Services, outside: Callable[[], Connection], kind: str
) -> None:
    services.jobs.create(pipeline_manifest("orders"), actor=ADMIN)
    application_id = services.applications.run("orders", actor=ADMIN).id
    holder = outside()
    holder.execute(text("SELECT 1 FROM jobs WHERE name = 'orders' FOR UPDATE"))
    errors: list[BaseException] = []

    def moving() -> None:
        try:
            MOVES[kind](services, application_id)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    mover = threading.Thread(target=moving)
    mover.start()
    try:
        _await_lock_wait(outside())
        probe = outside()
        try:
            probe.execute(
                text("SELECT 1 FROM applications WHERE id = :id FOR UPDATE NOWAIT"),
                {"id": application_id},
            )
        except OperationalError as refused:
            pytest.fail(f"the move locked the application before the job: {refused.orig}")
        finally:
            probe.rollback()
    finally:
        holder.rollback()
        mover.join()
    assert errors == []
    moved = services.applications.get(application_id, actor=ADMIN).application
    assert moved.state in (AppState.TERMINATING, AppState.FAILED)
    assert services.jobs.get("orders", actor=ADMIN).status == moved.state


def _await_lock_wait(observer: Connection) -> None:
    """Return once some session of the database waits for a lock (the mover, on the job)."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while time.monotonic() < deadline:
        waiting = observer.execute(
            text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
        ).scalar_one()
        observer.rollback()
        if waiting:
            return
        time.sleep(0.02)
    pytest.fail("the move never waited for the job's row")
