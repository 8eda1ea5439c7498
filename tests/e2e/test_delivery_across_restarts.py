"""Delivery across a killed server, with real processes: a `streamjobs server` subprocess, a real
python job's driver (spark-submit) that fails, and a real HTTP receiver.

The destination is down when the job fails; the server is killed (SIGKILL) before it could
deliver; the destination comes back; the server is started again and delivers the notice
exactly once. Then the one window left: the server killed after the receiver got the notice but
before it recorded the 2xx. The notice is sent again once its claim's lease ends, with the same
``X-Streamjobs-Delivery`` id, so a receiver that drops repeats keeps one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_applications import Server, running_server, wait_for
from tests.notify_receivers import HttpReceiver, http_receiver, webhook_destination

pytestmark = pytest.mark.spark

PROGRAM = 'raise RuntimeError("the upstream is gone")\n'
SEND_TIMEOUT_SECONDS = 1
"""So that a claimed row's lease (``DeliveryTerms.lease_seconds``: 36 s) ends within
``wait_for``'s patience."""


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    for name, value in {
        "STREAMJOBS_DELIVERY_INTERVAL_SECONDS": "0.2",
        "STREAMJOBS_DELIVERY_RETRY_BASE_SECONDS": "0.5",
        "STREAMJOBS_DELIVERY_RETRY_MAX_SECONDS": "1",
        "STREAMJOBS_DELIVERY_MAX_ATTEMPTS": "1000",
        "STREAMJOBS_DELIVERY_SEND_TIMEOUT_SECONDS": str(SEND_TIMEOUT_SECONDS),
    }.items():
        monkeypatch.setenv(name, value)
    with running_server(tmp_path) as running:
        yield running


@pytest.fixture
def hook() -> Iterator[HttpReceiver]:
    with http_receiver() as receiver:
        yield receiver


def python_job(program: Path) -> dict[str, Any]:
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "upstream-reader"},
        "spec": {
            "application": {"type": "python", "mainApplicationFile": program.as_uri()},
            "notifications": [{"destination": "ops-hook", "events": ["failed"]}],
        },
    }


def run_until_failed(api: httpx.Client) -> str:
    started = api.post("/api/v1/jobs/upstream-reader/run")
    assert started.status_code == 201, started.text
    app_id: str = started.json()["id"]

    def failed() -> bool:
        return bool(api.get(f"/api/v1/applications/{app_id}").json()["state"] == "FAILED")

    wait_for("the job to fail", failed)
    return app_id


def deliveries(api: httpx.Client) -> list[dict[str, Any]]:
    answer = api.get("/api/v1/notification-destinations/ops-hook/deliveries")
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def test_a_killed_server_delivers_each_notice_once_after_it_starts_again(
    server: Server, hook: HttpReceiver, tmp_path: Path
) -> None:
    program = tmp_path / "data" / "upstream_reader.py"
    program.parent.mkdir(parents=True)
    program.write_text(PROGRAM)
    hook.answer(*[503] * 100_000)  # the destination is down
    with server.client() as api:
        created = api.post(
            "/api/v1/notification-destinations", json=webhook_destination("ops-hook", hook.url)
        )
        assert created.status_code == 201, created.text
        put = api.put("/api/v1/jobs/upstream-reader", json=python_job(program))
        assert put.is_success, put.text
        first = run_until_failed(api)
        wait_for("a refused delivery", lambda: len(hook.requests) >= 1)
    server.kill()  # between the event and its delivery

    hook.answer()  # the destination is back
    refused = len(hook.requests)
    server.start()
    wait_for("the delivery", lambda: 200 in hook.answered)
    time.sleep(2)  # ten more rounds of the worker: nothing is sent again
    assert hook.answered[refused:] == [200]
    assert hook.answered[:refused] == [503] * refused
    assert {request.delivery for request in hook.requests} == {hook.requests[0].delivery}
    body = hook.requests[-1].json()
    assert (body["event"], body["application"]) == ("failed", first)
    assert body["message"] == "attempt 1 failed: RuntimeError: the upstream is gone"
    assert body["link"] == f"{server.url}/applications/{first}"
    with server.client() as api:
        (row,) = deliveries(api)
    assert (row["state"], row["responseStatus"], row["attempts"]) == ("delivered", 200, refused + 1)

    # The window left: the receiver has the notice, the server dies before recording the 2xx.
    hook.held.set()
    with server.client() as api:
        second = run_until_failed(api)
    wait_for("the second notice to arrive", lambda: len(hook.requests) == refused + 2)
    server.kill()
    hook.held.clear()
    hook.released.set()
    server.start()
    wait_for(
        "the notice to be sent again after its lease",
        lambda: len(hook.requests) == refused + 3,
    )
    time.sleep(2)
    again = hook.requests[refused + 1 :]
    assert len(again) == 2
    assert again[0].delivery == again[1].delivery
    assert [request.json()["application"] for request in again] == [second, second]
    assert len(hook.distinct()) == 2  # what a receiver that drops repeats keeps: one per event
    with server.client() as api:
        rows = deliveries(api)
    assert [(row["application"], row["state"]) for row in rows] == [
        (second, "delivered"),
        (first, "delivered"),
    ]
