"""A real python job that fails: its application's ``error`` is the exception its program raised
(found in the driver's log), its events say how the driver ended, and the server's console shows
the supervisor's decisions beside the access log (issue 21, item 3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streamjobs.launch.ports import free_loopback_port
from tests.e2e.test_applications import Server, _drivers_of, wait_for
from tests.e2e.test_server_process import STREAMJOBS, streamjobs, wait_until_healthy

pytestmark = pytest.mark.spark

PROGRAM = """\
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("settings-reader").getOrCreate()
settings = {}
print(settings["x"])
"""


@dataclass
class ConsoleServer(Server):
    """A server process whose console (stdout and stderr) is kept in ``console``."""

    console: Path | None = None

    def start(self) -> None:
        assert self.console is not None
        with self.console.open("w") as console:
            self.process = subprocess.Popen(
                [*STREAMJOBS, "server"],
                env=self.env,
                stdout=console,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        wait_until_healthy(self.url, self.process)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ConsoleServer]:
    env = dict(os.environ)
    env.update(
        STREAMJOBS_HOME=str(tmp_path / "home"),
        STREAMJOBS_PORT=str(free_loopback_port()),
        STREAMJOBS_DATABASE_URL=f"sqlite:///{tmp_path / 'store.db'}",
        STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([(tmp_path / "data").as_uri()]),
    )
    assert streamjobs(env, "admin", "bootstrap").returncode == 0
    token = (tmp_path / "home" / "admin-token").read_text().strip()
    running = ConsoleServer(
        env=env,
        url=f"http://127.0.0.1:{env['STREAMJOBS_PORT']}",
        token=token,
        console=tmp_path / "console.log",
    )
    running.start()
    try:
        yield running
    finally:
        running.kill()
        for process in _drivers_of(tmp_path / "home"):
            os.killpg(process.pid, signal.SIGKILL)


def python_job(program: Path) -> dict[str, Any]:
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "settings-reader"},
        "spec": {"application": {"type": "python", "mainApplicationFile": program.as_uri()}},
    }


def test_a_failing_python_job_shows_its_exception_as_its_error(
    server: ConsoleServer, tmp_path: Path
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

    console = (server.console or tmp_path).read_text()
    assert "settings-reader-1: attempt 1 submitted" in console
    assert "settings-reader-1: driver exited with code 1: KeyError: 'x'; " in console
    assert '"POST /api/v1/jobs/settings-reader/run HTTP/1.1" 201' in console
