"""A PUT that names no resourceVersion wins or loses on its content, not on timing (issue 20,
item 9): many at once of one job (or connection) all succeed, on SQLite and PostgreSQL; one
that names a version still fails when the version has moved on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.problems import problem_of
from tests.factories import connection_manifest, console_manifest
from tests.supervised_server import SupervisedServer, supervised_server

JOBS = "/api/v1/jobs"
CONNECTIONS = "/api/v1/connections"
PARALLEL = 50


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[SupervisedServer]:
    with supervised_server(database_url, tmp_path / "home", supervised=False) as running:
        yield running


def _job(description: str) -> dict[str, Any]:
    manifest = console_manifest("contended")
    manifest["metadata"]["description"] = description
    return manifest


def _connection(servers: str) -> dict[str, Any]:
    return connection_manifest("contended", bootstrapServers=servers)


def _put_all(
    server: SupervisedServer, path: str, documents: list[dict[str, Any]]
) -> list[httpx.Response]:
    """PUT each document to ``path`` from a thread of its own, all let go at once."""
    start = threading.Barrier(len(documents))
    responses: list[httpx.Response | None] = [None] * len(documents)

    def put(index: int) -> None:
        with server.client() as client:
            start.wait()
            responses[index] = client.put(path, json=documents[index])

    threads = [threading.Thread(target=put, args=(index,)) for index in range(len(documents))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(response is not None for response in responses)
    return [response for response in responses if response is not None]


def _results(responses: list[httpx.Response]) -> list[str]:
    assert [r.status_code for r in responses if r.status_code not in (200, 201)] == [], [
        r.text for r in responses if r.status_code not in (200, 201)
    ]
    results = [str(response.json()["result"]) for response in responses]
    for response, result in zip(responses, results, strict=True):
        assert response.status_code == (201 if result == "created" else 200)
    return results


def test_parallel_puts_of_different_content_all_succeed_and_count_versions(
    server: SupervisedServer,
) -> None:
    documents = [_job(f"edit {index}") for index in range(PARALLEL)]

    results = _results(_put_all(server, f"{JOBS}/contended", documents))

    assert results.count("created") == 1
    assert results.count("unchanged") == 0
    assert results.count("configured") == PARALLEL - 1
    with server.client() as api:
        final = api.get(f"{JOBS}/contended").json()
    assert final["metadata"]["description"] in {f"edit {index}" for index in range(PARALLEL)}
    assert final["metadata"]["resourceVersion"] == str(PARALLEL)


def test_parallel_puts_of_the_same_content_create_once_and_change_nothing_after(
    server: SupervisedServer,
) -> None:
    results = _results(_put_all(server, f"{JOBS}/contended", [_job("same")] * PARALLEL))

    assert results.count("created") == 1
    assert results.count("unchanged") == PARALLEL - 1
    with server.client() as api:
        assert api.get(f"{JOBS}/contended").json()["metadata"]["resourceVersion"] == "1"


def test_parallel_puts_of_a_connection_all_succeed(server: SupervisedServer) -> None:
    documents = [_connection(f"broker-{index}:9092") for index in range(PARALLEL)]

    results = _results(_put_all(server, f"{CONNECTIONS}/contended", documents))

    assert results.count("created") == 1
    assert results.count("configured") == PARALLEL - 1
    with server.client() as api:
        final = api.get(f"{CONNECTIONS}/contended").json()
    assert final["spec"]["bootstrapServers"] in {
        f"broker-{index}:9092" for index in range(PARALLEL)
    }
    assert final["metadata"]["resourceVersion"] == str(PARALLEL)


def test_a_put_naming_an_old_version_is_still_a_conflict(server: SupervisedServer) -> None:
    with server.client() as api:
        assert api.put(f"{JOBS}/contended", json=_job("first")).status_code == 201
        assert api.put(f"{JOBS}/contended", json=_job("second")).status_code == 200
        stale = _job("third")
        stale["metadata"]["resourceVersion"] = "1"

        problem = problem_of(api.put(f"{JOBS}/contended", json=stale), 409)

        assert "version 1" in problem["detail"]
        assert api.get(f"{JOBS}/contended").json()["metadata"]["description"] == "second"
