"""A ``streamjobs server`` as a child process of the harness, the way a user starts one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

from streamjobs.launch.ports import free_loopback_port

STREAMJOBS = (sys.executable, "-m", "streamjobs.cli")
START_SECONDS = 90.0
POLL_SECONDS = 0.2
MIB = 1024 * 1024
ENDED = frozenset({"COMPLETED", "FAILED", "ABORTED", "STOPPED"})


class ServerProcess:
    """``with ServerProcess(home, database_url=...) as server:`` a server that answers; on the way
    out SIGTERM to its process group, SIGKILL if it has not ended within 15 s."""

    def __init__(
        self,
        home: Path,
        *,
        database_url: str,
        supervisor: bool = True,
        data_roots: Sequence[Path] = (),
    ) -> None:
        self.home = home
        port = free_loopback_port()
        self.url = f"http://127.0.0.1:{port}"
        self.environment = {
            **os.environ,
            "STREAMJOBS_HOME": str(home),
            "STREAMJOBS_PORT": str(port),
            "STREAMJOBS_DATABASE_URL": database_url,
            "STREAMJOBS_SUPERVISOR": "true" if supervisor else "false",
            "STREAMJOBS_DEFAULT_DATA_ROOTS": json.dumps([root.as_uri() for root in data_roots]),
        }
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("the server is not started")
        return self._process.pid

    def rss_mib(self) -> float:
        return float(psutil.Process(self.pid).memory_info().rss) / MIB

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server and return once it answers; RuntimeError (and stopped) if it exits
        first or does not answer within ``START_SECONDS``."""
        started = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        with (
            (self.home / "server.out").open("wb") as out,
            (self.home / "server.err").open("wb") as err,
        ):
            self._process = subprocess.Popen(
                [*STREAMJOBS, "server"],
                env=self.environment,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        try:
            self._wait_until_healthy(started)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGTERM)
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(timeout=30)

    def _wait_until_healthy(self, started: float) -> None:
        assert self._process is not None
        while time.monotonic() - started < START_SECONDS:
            if self._process.poll() is not None:
                tail = (self.home / "server.err").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the server exited with {self._process.returncode}:\n{tail}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=5).is_success:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the server did not answer within {START_SECONDS:g} s")


class BenchServer(ServerProcess):
    """A server with its supervisor over a SQLite store in ``home``, its admin bootstrapped, driven
    over the API; every driver its supervisor started is killed on the way out."""

    def __init__(self, home: Path, *, data_root: Path) -> None:
        super().__init__(
            home, database_url=f"sqlite:///{home / 'streamjobs.db'}", data_roots=[data_root]
        )
        self._client: httpx.Client | None = None

    def __enter__(self) -> BenchServer:
        self.home.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [*STREAMJOBS, "admin", "bootstrap"],
            env=self.environment,
            capture_output=True,
            check=True,
            timeout=120,
        )
        token = (self.home / "admin-token").read_text(encoding="utf-8").strip()
        self.start()
        headers = {"Authorization": f"Bearer {token}"}
        self._client = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        return self

    def __exit__(self, *_: object) -> None:
        if self._client is not None:
            self._client.close()
        self.stop()
        self.kill_drivers()

    def call(self, method: str, path: str, **arguments: Any) -> Any:
        """The JSON answer of an API call; RuntimeError unless it succeeded."""
        if self._client is None:
            raise RuntimeError("the server is not started")
        response = self._client.request(method, f"/api/v1{path}", **arguments)
        if not response.is_success:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json() if response.content else None

    def run(self, manifest: dict[str, Any]) -> str:
        """Apply the job and run it; the new application's id."""
        name = manifest["metadata"]["name"]
        self.call("PUT", f"/jobs/{name}", json=manifest)
        return str(self.call("POST", f"/jobs/{name}/run")["id"])

    def application(self, application: str) -> dict[str, Any]:
        document: dict[str, Any] = self.call("GET", f"/applications/{application}")
        return document

    def wait_for(self, application: str, ready: Any, what: str, timeout: float) -> float:
        """Poll the application until ``ready(document)``; when that was seen (epoch seconds).
        RuntimeError if it ends first or after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            document = self.application(application)
            if ready(document):
                return time.time()
            if document["state"] in ENDED:
                raise RuntimeError(f"application {application} ended {document['state']}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"application {application}: not {what} after {timeout:g} s")
            time.sleep(POLL_SECONDS)

    def drivers(self) -> list[psutil.Process]:
        """The live driver wrappers of this server's supervisor (the standby's included)."""
        found = []
        for process in psutil.process_iter(["cmdline"]):
            cmdline = process.info["cmdline"] or []
            if "streamjobs.launch.wrapper" in cmdline and any(
                str(self.home) in part for part in cmdline
            ):
                found.append(process)
        return found

    def active_driver(self, standby_pid: int | None = None) -> psutil.Process:
        """The one live wrapper whose process tree does not hold ``standby_pid``."""
        active = []
        for wrapper in self.drivers():
            with contextlib.suppress(psutil.NoSuchProcess):
                tree = {wrapper.pid, *(c.pid for c in wrapper.children(recursive=True))}
                if standby_pid not in tree:
                    active.append(wrapper)
        if len(active) != 1:
            raise RuntimeError(f"{len(active)} active drivers (standby pid {standby_pid})")
        return active[0]

    def kill_driver(self, standby_pid: int | None = None) -> float:
        """SIGKILL the JVM and Python of the active driver, not its wrapper, as a crash would;
        when the signals went (epoch seconds). Returns once they are gone."""
        children = self.active_driver(standby_pid).children(recursive=True)
        killed_at = time.time()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.send_signal(signal.SIGKILL)
        psutil.wait_procs(children, timeout=60)
        return killed_at

    def kill_drivers(self) -> None:
        for wrapper in self.drivers():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(wrapper.pid, signal.SIGKILL)


def epoch_seconds(timestamp: str | None) -> float | None:
    """An API timestamp (ISO 8601; UTC when it names no zone) as seconds since the epoch."""
    if timestamp is None:
        return None
    moment = datetime.fromisoformat(timestamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
