"""A real python job that fails: its application's ``error`` is the exception its program raised
(found in the driver's log), its events say how the driver ended, and the server's console shows
the supervisor's decisions beside the access log (issue 21, item 3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_applications import Server, running_server, wait_for

pytestmark = pytest.mark.spark

PROGRAM = """\
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("settings-reader").getOrCreate()
settings = {}
print(settings["x"])
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with running_server(tmp_path, console=tmp_path / "console.log") as running:
        yield running


def python_job(program: Path) -> dict[str, Any]:
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "settings-reader"},
        "spec": {"application": {"type": "python", "mainApplicationFile": program.as_uri()}},
    }


def test_a_failing_python_job_shows_its_exception_as_its_error(
    server: Server, tmp_path: Path
) -> None:
    program = tmp_path / "data" / "settings_reader.py"
    program.parent.mkdir(parents=True)
    program.write_text(PROGRAM)
    with server.client() as api:
        assert api.put("/api/v1/jobs/settings-reader", json=python_job(program)).is_success
        started = api.post("/api/v1/jobs/settings-reader/run")
        assert started.status_code == 201, started.text
        app_id = started.json()["id"]

        def failed() -> dict[str, Any] | None:
            application: dict[str, Any] = api.get(f"/api/v1/applications/{app_id}").json()
            return application if application["state"] == "FAILED" else None

        application = wait_for("the job to fail", failed)
        assert application["errorMessage"] == "KeyError: 'x'"
        events = api.get(f"/api/v1/applications/{app_id}/events").json()
        messages = [event["message"] for event in events["items"]]
        assert any(
            message.startswith("driver exited with code 1: KeyError: 'x'; ") for message in messages
        ), messages
        log = api.get(f"/api/v1/applications/{app_id}/logs", params={"instance": "driver-stdout"})
        assert 'print(settings["x"])' in log.json()["text"]  # the whole trace stays in the log

    console = (tmp_path / "console.log").read_text()
    assert "settings-reader-1: attempt 1 submitted" in console
    assert "settings-reader-1: driver exited with code 1: KeyError: 'x'; " in console
    assert '"POST /api/v1/jobs/settings-reader/run HTTP/1.1" 201' in console
