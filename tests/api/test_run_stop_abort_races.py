"""Run, Stop, Resume and Abort from many clients at once while the supervisor moves the same
applications (issue 20 review, item 1), against a real server on PostgreSQL whose supervisor
ticks by itself on the fake launcher, its drivers failing now and then (the jobs suspend on
failure, so there is something to resume): each request is served or refused (409, 404), never
a 500, and no transaction dies in a deadlock, as all of them take the job's row before its
application's."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import console_manifest
from tests.supervised_server import SupervisedServer, supervised_server

pytestmark = pytest.mark.postgres

JOBS = "/api/v1/jobs"
JOB_COUNT = 4
CLIENTS = 8
REQUESTS_PER_CLIENT = 40
ANSWERS = {200, 201, 202, 404, 409}


@pytest.fixture
def server(postgres_url: str, tmp_path: Path) -> Iterator[SupervisedServer]:
    with supervised_server(postgres_url, tmp_path / "home") as running:
        yield running


def test_concurrent_requests_and_supervisor_never_deadlock(
    server: SupervisedServer, caplog: pytest.LogCaptureFixture
) -> None:
    names = [f"raced-{index}" for index in range(JOB_COUNT)]
    with server.client() as api:
        for name in names:
            manifest = console_manifest(name, processing={"suspendOnFailure": True})
            assert api.put(f"{JOBS}/{name}", json=manifest).status_code == 201
    answers: list[tuple[str, int, str]] = []
    start = threading.Barrier(CLIENTS)

    def client(seed: int) -> None:
        chosen = random.Random(seed)
        with server.client() as api:
            start.wait()
            for _ in range(REQUESTS_PER_CLIENT):
                name = chosen.choice(names)
                action = chosen.choice(["run", "stop", "resume", "resume", "abort", "fail"])
                if action == "fail":
                    _fail_a_driver(server, chosen)
                    continue
                if action == "abort":
                    application = api.get(f"{JOBS}/{name}").json()["status"].get("application")
                    if application is None:
                        continue
                    response = api.post(f"/api/v1/applications/{application['id']}/abort")
                else:
                    response = api.post(f"{JOBS}/{name}/{action}")
                answers.append((action, response.status_code, response.text[:300]))

    with caplog.at_level(logging.WARNING):
        threads = [threading.Thread(target=client, args=(seed,)) for seed in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    unexpected = [answer for answer in answers if answer[1] not in ANSWERS]
    assert unexpected == []
    assert {status for action, status, _ in answers if action == "run"} & {201}
    logged = [f"{record.getMessage()}\n{record.exc_text or ''}" for record in caplog.records]
    assert [text for text in logged if "deadlock" in text or "rolled the change back" in text] == []


def _fail_a_driver(server: SupervisedServer, chosen: random.Random) -> None:
    """Make one of the running drivers exit with an error, as a crashing job's does."""
    live = [index for index, driver in enumerate(server.launcher.drivers) if driver.running]
    if live:
        server.launcher.exit(chosen.choice(live), 1)
