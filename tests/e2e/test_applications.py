"""Applications for real: a server process with its supervisor, real spark-submit drivers on
local Spark, the rate -> parquet pipeline run, killed, restarted, re-attached, stopped and
aborted, driven over the REST API."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml

from streamjobs.launch.ports import free_loopback_port
from tests.e2e.test_server_process import EXAMPLES, STREAMJOBS, streamjobs, wait_until_healthy

pytestmark = pytest.mark.spark
WAIT_SECONDS = 240.0


@dataclass
class Server:
    env: dict[str, str]
    url: str
    token: str
    process: subprocess.Popen[str] | None = None
    console: Path | None = None
    """Where the server's stdout and stderr go, when a test reads them; else nowhere."""

    def start(self) -> None:
        with contextlib.ExitStack() as files:
            output = (
                subprocess.DEVNULL
                if self.console is None
                else files.enter_context(self.console.open("a"))
            )
            self.process = subprocess.Popen(
                [*STREAMJOBS, "server"],
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT if self.console is not None else subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        wait_until_healthy(self.url, self.process)

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@contextlib.contextmanager
def running_server(
    tmp_path: Path, *, console: Path | None = None, settings: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """A bootstrapped server on SQLite under ``tmp_path`` (with ``settings`` in its
    environment), killed with its drivers after."""
    env = dict(os.environ)
    env.update(
        STREAMJOBS_HOME=str(tmp_path / "home"),
        STREAMJOBS_PORT=str(free_loopback_port()),
        STREAMJOBS_DATABASE_URL=f"sqlite:///{tmp_path / 'store.db'}",
        STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([(tmp_path / "data").as_uri()]),
        **(settings or {}),
    )
    assert streamjobs(env, "admin", "bootstrap").returncode == 0
    token = (tmp_path / "home" / "admin-token").read_text().strip()
    url = f"http://127.0.0.1:{env['STREAMJOBS_PORT']}"
    running = Server(env=env, url=url, token=token, console=console)
    running.start()
    try:
        yield running
    finally:
        running.kill()
        for process in drivers_of(tmp_path / "home"):
            os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with running_server(tmp_path) as running:
        yield running


def rate_job(tmp_path: Path) -> dict[str, Any]:
    """The rate -> parquet example, writing under ``tmp_path``, restarted whatever happens."""
    job = copy.deepcopy(yaml.safe_load((EXAMPLES / "rate-to-parquet.yaml").read_text()))
    pipeline = job["spec"]["pipeline"]
    pipeline["streaming"] = {
        "triggerMode": "ProcessingTime",
        "triggerDuration": "1 second",
        "checkpointLocation": (tmp_path / "data" / "checkpoint").as_uri(),
    }
    pipeline["outputs"][0]["path"] = (tmp_path / "data" / "out").as_uri()
    job["spec"]["restartPolicy"] = {"type": "Always", "onFailureRetryInterval": 1}
    return job


def wait_for(what: str, check: Callable[[], Any], describe: Callable[[], str] | None = None) -> Any:
    """``check()``'s first true answer; failing after ``WAIT_SECONDS`` with ``describe()``."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    described = f": {describe()}" if describe is not None else ""
    raise AssertionError(f"waited {WAIT_SECONDS:g} s for {what}{described}")


def test_run_kill_reattach_stop_run_again_and_abort(server: Server, tmp_path: Path) -> None:
    home = Path(server.env["STREAMJOBS_HOME"])
    with server.client() as api:
        assert api.put("/api/v1/jobs/rate-to-parquet", json=rate_job(tmp_path)).is_success
        started = api.post("/api/v1/jobs/rate-to-parquet/run")
        assert started.status_code == 201, started.text
        app_id = started.json()["id"]
        second = api.post("/api/v1/jobs/rate-to-parquet/run")
        assert second.status_code == 409
        assert "rate-to-parquet-1" in second.json()["detail"]

        def application() -> dict[str, Any]:
            return api.get(f"/api/v1/applications/{app_id}").json()

        def batch_at_least(batch: int, attempt: int) -> Callable[[], bool]:
            def check() -> bool:
                app = application()
                latest = app["latest"]
                return (
                    app["state"] == "RUNNING"
                    and latest.get("attempt") == attempt
                    and (latest.get("batchId") or -1) >= batch
                )

            return check

        wait_for("RUNNING with two committed batches", batch_at_least(2, 1))
        metrics = api.get(f"/api/v1/applications/{app_id}/metrics").json()
        assert metrics["latest"]["inputRowsPerSecond"] is not None
        log = api.get(f"/api/v1/applications/{app_id}/logs", params={"tail": 50}).json()
        assert log["instances"].keys() >= {"driver", "driver-stdout"}
        wait_for("executor figures", lambda: application()["executors"])

        # SIGKILL of the driver under Always: a new attempt resumes from the checkpoint.
        killed_batch = application()["latest"]["batchId"]
        (driver,) = drivers_of(home)
        sigkill_driver(driver.pid)
        wait_for("the second attempt to commit", batch_at_least(killed_batch + 1, 2))
        app = application()
        assert app["restarts"] == 1
        assert [attempt["outcome"] for attempt in app["attempts"]] == ["failed", None]
        killed, restarted = app["attempts"]
        assert _seconds(restarted["runningAt"]) - _seconds(killed["endedAt"]) >= 1.0

        # A server restart leaves the driver running and re-attaches to it.
        server.kill()
        (before,) = drivers_of(home)
        server.start()
        batch = application()["latest"]["batchId"]
        wait_for("reports after the server restart", batch_at_least(batch + 2, 2))
        (after,) = drivers_of(home)
        assert after.pid == before.pid
        assert len(application()["attempts"]) == 2

        # Graceful stop: STOPPED, exit 0, every started batch committed.
        assert api.post("/api/v1/jobs/rate-to-parquet/stop").status_code == 202
        wait_for("STOPPED", lambda: application()["state"] == "STOPPED")
        assert application()["exitCode"] == 0
        checkpoint = tmp_path / "data" / "checkpoint" / "even_ticks"
        offsets = {p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()}
        commits = {p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
        assert offsets == commits
        last_batch = max(int(name) for name in commits)

        # Run again: a new application resumes from the checkpoint; then abort it.
        again = api.post("/api/v1/jobs/rate-to-parquet/run").json()
        assert again["name"] == "rate-to-parquet-2"
        app_id = again["id"]
        wait_for("the new application to commit", batch_at_least(last_batch + 1, 1))
        assert api.post(f"/api/v1/applications/{app_id}/abort").status_code == 202
        wait_for("ABORTED", lambda: application()["state"] == "ABORTED")
        refused = api.post(f"/api/v1/applications/{app_id}/abort")
        assert refused.status_code == 409
        assert refused.headers["content-type"].startswith("application/problem+json")
        kinds = [
            e["kind"] for e in api.get(f"/api/v1/applications/{app_id}/events").json()["items"]
        ]
        assert kinds[:2] == ["run-requested", "submitted"]
        assert "first-batch-committed" in kinds
        assert kinds[-1] == "aborted"
        assert not drivers_of(home)
        jobs = api.get("/api/v1/jobs/rate-to-parquet").json()
        assert jobs["status"]["phase"] == "ABORTED"


def sigkill_driver(pid: int) -> None:
    """SIGKILL a driver's JVM and Python (the wrapper ``pid`` sees them die and records it); a
    short-lived child already gone is skipped."""
    for child in psutil.Process(pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            child.send_signal(signal.SIGKILL)


def drivers_of(home: Path) -> list[psutil.Process]:
    """The live driver wrappers whose attempt directories are under ``home``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "streamjobs.launch.wrapper" in cmdline and any(str(home) in part for part in cmdline):
            found.append(process)
    return found


def test_a_failing_pipeline_is_retried_then_fails_after_three_execution_attempts(
    server: Server, tmp_path: Path
) -> None:
    job = rate_job(tmp_path)
    job["metadata"]["name"] = "fails-on-purpose"
    job["spec"]["pipeline"]["inputs"][0]["options"] = {"rowsPerSecond": 5}
    job["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] = (
        "SELECT value, IF(value >= 10, raise_error(concat('boom at ', value)), value) AS checked "
        "FROM ticks"
    )
    job["spec"]["restartPolicy"] = {
        "type": "OnFailure",
        "onFailureRetries": 2,
        "onFailureRetryInterval": 2,
    }
    with server.client() as api:
        assert api.put("/api/v1/jobs/fails-on-purpose", json=job).is_success
        app_id = api.post("/api/v1/jobs/fails-on-purpose/run").json()["id"]
        app = wait_for(
            "FAILED",
            lambda: (
                (a := api.get(f"/api/v1/applications/{app_id}").json())["state"] == "FAILED" and a
            ),
        )
        assert (app["executionAttempts"], app["submissionAttempts"], app["restarts"]) == (3, 3, 2)
        assert app["errorMessage"] == "the driver failed (exit code 1)"
        attempts = app["attempts"]
        assert [attempt["outcome"] for attempt in attempts] == ["failed"] * 3
        for ended, next_one in itertools.pairwise(attempts):
            # The next driver may start during the retry interval; its queries may not.
            # runningAt is empty when a tick never saw it running: it then ended a failure.
            ran = next_one["runningAt"] or next_one["endedAt"]
            pause = _seconds(ran) - _seconds(ended["endedAt"])
            assert pause >= 2.0, attempts
        events = api.get(f"/api/v1/applications/{app_id}/events").json()["items"]
        assert [e["kind"] for e in events].count("restarting") == 2
        assert any("boom at" in e["message"] for e in events if e["kind"] == "query-failed")
        assert api.get("/api/v1/jobs/fails-on-purpose").json()["status"]["phase"] == "FAILED"


def _seconds(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp).timestamp()
