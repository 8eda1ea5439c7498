"""Run and Delete of one job take turns (issue 20, item 5), against a real server whose
supervisor runs drivers on the fake launcher, on SQLite and PostgreSQL.

A Delete refuses while the job has a live application, naming it, unless asked to abort it
first; a Run racing a Delete either wins (the Delete is refused) or finds the job gone; never is
an application left live without its job, and a new job of the old name runs and deletes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamjobs.domain.states import LIVE_STATES
from tests.api.problems import problem_of
from tests.factories import console_manifest
from tests.supervised_server import SupervisedServer, supervised_server

JOBS = "/api/v1/jobs"
RACES = 25


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[SupervisedServer]:
    with supervised_server(database_url, tmp_path / "home") as running:
        yield running


@pytest.fixture
def api(server: SupervisedServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _create(api: httpx.Client, name: str) -> None:
    response = api.put(f"{JOBS}/{name}", json=console_manifest(name))
    assert response.status_code in (200, 201), response.text


def _run(api: httpx.Client, name: str) -> dict[str, str]:
    response = api.post(f"{JOBS}/{name}/run")
    assert response.status_code == 201, response.text
    application: dict[str, str] = response.json()
    return application


def _orphans(server: SupervisedServer) -> list[str]:
    """The live applications whose job is gone."""
    with server.services.store.reading() as repos:
        applications, _ = repos.applications.list(states=sorted(LIVE_STATES), limit=500)
        return [app.name for app in applications if repos.jobs.find(app.job_name) is None]


def test_delete_refuses_while_the_job_has_a_live_application_naming_it(
    api: httpx.Client,
) -> None:
    _create(api, "busy")
    application = _run(api, "busy")

    problem = problem_of(api.delete(f"{JOBS}/busy"), 409)

    assert application["name"] in problem["detail"]
    assert application["id"] in problem["detail"]
    assert "abort" in problem["detail"]
    assert api.get(f"{JOBS}/busy").status_code == 200


def test_delete_with_abort_aborts_the_live_application_then_deletes_the_job(
    api: httpx.Client, server: SupervisedServer
) -> None:
    _create(api, "aborted-first")
    application = _run(api, "aborted-first")

    response = api.delete(f"{JOBS}/aborted-first", params={"abort": "true"})

    assert response.status_code == 204, response.text
    assert api.get(f"{JOBS}/aborted-first").status_code == 404
    ended = api.get(f"/api/v1/applications/{application['id']}").json()
    assert ended["state"] == "ABORTED"
    assert ended["requested"] == "abort"
    assert _orphans(server) == []


def test_delete_with_abort_of_a_job_without_application_just_deletes(api: httpx.Client) -> None:
    _create(api, "idle")

    assert api.delete(f"{JOBS}/idle", params={"abort": "true"}).status_code == 204
    assert api.get(f"{JOBS}/idle").status_code == 404


def test_delete_with_abort_of_a_missing_job_is_not_found(api: httpx.Client) -> None:
    problem_of(api.delete(f"{JOBS}/never-was", params={"abort": "true"}), 404)


def test_delete_with_abort_refuses_if_the_application_does_not_end_in_time(
    database_url: str, tmp_path: Path
) -> None:
    with (
        supervised_server(
            database_url, tmp_path / "home", supervised=False, delete_abort_wait_seconds=0.3
        ) as server,
        server.client() as api,
    ):
        _create(api, "stuck")
        application = _run(api, "stuck")

        problem = problem_of(api.delete(f"{JOBS}/stuck", params={"abort": "true"}), 409)

        assert application["name"] in problem["detail"]
        assert "not ended yet" in problem["detail"]
        assert api.get(f"{JOBS}/stuck").status_code == 200
        assert api.get(f"/api/v1/applications/{application['id']}").json()["state"] == (
            "TERMINATING"
        )


def test_a_run_racing_a_delete_never_leaves_an_application_without_its_job(
    api: httpx.Client, server: SupervisedServer
) -> None:
    outcomes: list[tuple[int, int]] = []
    for race in range(RACES):
        name = f"race-{race}"
        _create(api, name)
        outcomes.append(_race(server, name))
        if api.get(f"{JOBS}/{name}").status_code == 200:
            assert api.delete(f"{JOBS}/{name}", params={"abort": "true"}).status_code == 204
        assert _orphans(server) == []

    for run, delete in outcomes:
        assert (run, delete) in {(201, 409), (404, 204), (409, 204)}, outcomes
    runs_won = sum(1 for run, _ in outcomes if run == 201)
    launched = {driver.attempt.job.metadata.name for driver in server.launcher.drivers}
    assert len(launched) <= runs_won
    assert launched <= {f"race-{race}" for race, (run, _) in enumerate(outcomes) if run == 201}


def test_a_job_recreated_under_a_deleted_name_runs_and_deletes(api: httpx.Client) -> None:
    _create(api, "reborn")
    _run(api, "reborn")
    assert api.delete(f"{JOBS}/reborn", params={"abort": "true"}).status_code == 204

    _create(api, "reborn")
    second = _run(api, "reborn")

    assert second["name"] == "reborn-2"
    assert api.delete(f"{JOBS}/reborn", params={"abort": "true"}).status_code == 204
    _create(api, "reborn")
    assert api.delete(f"{JOBS}/reborn").status_code == 204


def _race(server: SupervisedServer, name: str) -> tuple[int, int]:
    """Fire Run and Delete of ``name`` at the same moment; their status codes."""
    start = threading.Barrier(2)
    statuses: dict[str, int] = {}

    def call(method: str, path: str) -> None:
        with server.client() as client:
            start.wait()
            statuses[method] = client.request(method, path).status_code

    threads = [
        threading.Thread(target=call, args=("POST", f"{JOBS}/{name}/run")),
        threading.Thread(target=call, args=("DELETE", f"{JOBS}/{name}")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses["POST"], statuses["DELETE"]
