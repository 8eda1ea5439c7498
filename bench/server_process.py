"""A ``streamjobs server`` as a child process of the harness, the way a user starts one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.processes import signal_group, start
from streamjobs.launch.ports import free_loopback_port

STREAMJOBS = (sys.executable, "-m", "streamjobs.cli")
START_SECONDS = 90.0
POLL_SECONDS = 0.2
TIMEOUT_SECONDS = 300.0
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
            "STREAMJOBS_HOME": str(home),
            "STREAMJOBS_PORT": str(port),
            "STREAMJOBS_DATABASE_URL": database_url,
            "STREAMJOBS_SUPERVISOR": "true" if supervisor else "false",
            "STREAMJOBS_DEFAULT_DATA_ROOTS": json.dumps([root.as_uri() for root in data_roots]),
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError("the server is not started")
        return self.process.pid

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
        deadline = time.monotonic() + START_SECONDS
        self.home.mkdir(parents=True, exist_ok=True)
        out, err = self.home / "server.out", self.home / "server.err"
        self.process = process = start(
            [*STREAMJOBS, "server"], self.home, self.environment, out, err
        )
        try:
            while process.poll() is None:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{self.url}/healthz", timeout=5).is_success:
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not answer within {START_SECONDS:g} s")
                time.sleep(0.1)
            tail = err.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the server exited with {process.returncode}:\n{tail}")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            signal_group(self.process.pid)
            self.process.wait(timeout=30)


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
        bootstrap = [*STREAMJOBS, "admin", "bootstrap"]
        environment = {**os.environ, **self.environment}
        subprocess.run(bootstrap, env=environment, capture_output=True, check=True, timeout=120)
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

    def wait_for(
        self,
        application: str,
        ready: Callable[[dict[str, Any]], bool],
        what: str,
        timeout: float = TIMEOUT_SECONDS,
    ) -> dict[str, Any]:
        """Poll the application until ``ready(document)``; that document. RuntimeError if it
        ends first or after ``timeout``."""
        deadline = time.monotonic() + timeout
        document: dict[str, Any]
        while not ready(document := self.call("GET", f"/applications/{application}")):
            if document["state"] in ENDED:
                raise RuntimeError(f"application {application} ended {document['state']}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"application {application}: not {what} after {timeout:g} s")
            time.sleep(POLL_SECONDS)
        return document

    def drivers(self) -> list[psutil.Process]:
        """The live driver wrappers of this server's supervisor (the standby's included)."""
        return [
            process
            for process in psutil.process_iter(["cmdline"])
            if "streamjobs.launch.wrapper" in (cmdline := process.info["cmdline"] or [])
            and any(str(self.home) in part for part in cmdline)
        ]

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
            signal_group(wrapper.pid)


def epoch_seconds(timestamp: str) -> float:
    """An API timestamp (ISO 8601; UTC when it names no zone) as seconds since the epoch."""
    moment = datetime.fromisoformat(timestamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
