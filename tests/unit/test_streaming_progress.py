"""A program's streaming progress from its driver's Spark REST API (``launch.streaming_progress``):
the jobs list as a PySpark 4.1 driver answers it, and a real HTTP server standing in for one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from streamjobs.launch.base import DriverHandle
from streamjobs.launch.ports import free_loopback_port
from streamjobs.launch.streaming_progress import (
    StreamingProgress,
    last_micro_batch_completion,
    read_streaming_progress,
)

QUERY = "\nid = c1aa35d1-10fd-464f-8439-8a44d560a1d1\nrunId = ea092da1-f749-46ff-8c47-b3a5aba1f3f4"


def job(
    job_id: int, completed: str | None, *, batch: int | None, status: str = "SUCCEEDED"
) -> dict[str, Any]:
    """One entry of ``/api/v1/applications/<id>/jobs`` as a PySpark 4.1 driver lists it."""
    entry: dict[str, Any] = {
        "jobId": job_id,
        "name": "start at NativeMethodAccessorImpl.java:0",
        "submissionTime": "2026-11-26T22:17:03.226GMT",
        "status": status,
        "numTasks": 1,
    }
    if batch is not None:
        entry["description"] = f"{QUERY}\nbatch = {batch}"
        entry["jobGroup"] = "ea092da1-f749-46ff-8c47-b3a5aba1f3f4"
    if completed is not None:
        entry["completionTime"] = completed
    return entry


JOBS = [
    job(4, "2026-11-26T22:17:03.726GMT", batch=4),
    job(3, "2026-11-26T22:17:02.262GMT", batch=3),
    job(2, "2026-11-26T22:17:09.000GMT", batch=None),  # not a micro-batch's job
    job(1, "2026-11-26T22:17:10.000GMT", batch=1, status="FAILED"),
]


def test_the_latest_completed_micro_batch_job() -> None:
    assert last_micro_batch_completion(JOBS) == datetime(
        2026, 11, 26, 22, 17, 3, 726000, tzinfo=UTC
    )


def test_no_micro_batch_job_yet_is_none() -> None:
    assert last_micro_batch_completion([job(0, "2026-11-26T22:17:09.000GMT", batch=None)]) is None
    assert last_micro_batch_completion([job(0, None, batch=0), "junk"]) is None


@pytest.fixture
def driver_api() -> Iterator[tuple[int, list[str]]]:
    """An HTTP server answering the two requests as a driver does; the paths it was asked."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path == "/api/v1/applications":
                body: Any = [{"id": "local-1764195401", "name": "probe"}]
            elif self.path == "/api/v1/applications/local-1764195401/jobs?status=succeeded":
                body = JOBS
            else:
                self.send_response(404)
                self.end_headers()
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()


def handle(port: int) -> DriverHandle:
    return DriverHandle(pid=1, started_at=0.0, directory="", ui_port=port, master="local[2]")


def test_read_from_a_drivers_rest_api(driver_api: tuple[int, list[str]]) -> None:
    port, asked = driver_api
    assert read_streaming_progress(handle(port)) == StreamingProgress(
        datetime(2026, 11, 26, 22, 17, 3, 726000, tzinfo=UTC)
    )
    assert asked == [
        "/api/v1/applications",
        "/api/v1/applications/local-1764195401/jobs?status=succeeded",
    ]


def test_a_driver_that_does_not_answer_is_none() -> None:
    assert read_streaming_progress(handle(free_loopback_port()), timeout=0.5) is None
