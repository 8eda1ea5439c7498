"""A Delete that aborts first waits for the supervisor without holding a worker thread (issue 20
review, item 2): more such Deletes than the server has worker threads, all waiting for
applications that do not end, leave every plain route answering; and only one Delete waits for a
job at a time, another one of it is refused (409)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.domain.states import AppEvent, AppState
from streamjobs.services.application_state import move
from tests.api.problems import problem_of
from tests.factories import console_manifest
from tests.supervised_server import SupervisedServer, supervised_server

JOBS = "/api/v1/jobs"
WORKER_THREADS = 40
"""anyio's default limit of worker threads, which plain (``def``) routes run on."""
DELETES = WORKER_THREADS + 5
SETTLE_SECONDS = 60.0


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[SupervisedServer]:
    with supervised_server(
        database_url, tmp_path / "home", supervised=False, delete_abort_wait_seconds=600
    ) as running:
        yield running


def test_waiting_deletes_leave_plain_routes_answering(server: SupervisedServer) -> None:
    names = [f"waits-{index}" for index in range(DELETES)]
    with server.client() as api:
        for name in names:
            assert api.put(f"{JOBS}/{name}", json=console_manifest(name)).status_code == 201
            assert api.post(f"{JOBS}/{name}/run").status_code == 201
    statuses: dict[str, int] = {}
    deletes = [
        threading.Thread(target=_delete_aborting, args=(server, name, statuses)) for name in names
    ]
    for delete in deletes:
        delete.start()
    try:
        _await_terminating(server, at_least=WORKER_THREADS)
        with server.client() as api:
            answer = api.get(f"{JOBS}/{names[0]}/template", timeout=15)
            assert answer.status_code == 200
            _await_terminating(server, at_least=DELETES)
            second = api.delete(f"{JOBS}/{names[0]}", params={"abort": "true"}, timeout=15)
            assert "already waiting" in problem_of(second, 409)["detail"]
    finally:
        _end_applications_until_done(server, deletes)
    assert statuses == dict.fromkeys(names, 204)
    with server.client() as api:
        assert all(api.get(f"{JOBS}/{name}").status_code == 404 for name in names)


def _delete_aborting(server: SupervisedServer, name: str, statuses: dict[str, int]) -> None:
    with server.client() as api:
        response = api.delete(f"{JOBS}/{name}", params={"abort": "true"}, timeout=None)
        statuses[name] = response.status_code


def _terminating(server: SupervisedServer) -> list[str]:
    with server.services.store.reading() as repos:
        found, _ = repos.applications.list(states=[AppState.TERMINATING], limit=500)
    return [application.id for application in found]


def _await_terminating(server: SupervisedServer, *, at_least: int) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    while len(_terminating(server)) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} aborts were requested"
        time.sleep(0.05)


def _end_applications_until_done(server: SupervisedServer, deletes: list[threading.Thread]) -> None:
    """End each application being aborted, as the supervisor would once its driver is gone,
    until every Delete has answered."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while any(delete.is_alive() for delete in deletes) and time.monotonic() < deadline:
        for application_id in _terminating(server):
            with server.services.store.transaction() as repos:
                application = repos.applications.get(application_id)
                move(repos, application, AppEvent.ABORTED, at=server.services.clock.now())
        time.sleep(0.05)
