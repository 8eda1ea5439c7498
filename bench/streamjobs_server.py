"""A real ``streamjobs server`` for figures 2 and 3, driven over its REST API as a user would.

The server runs as its own process (``python -m streamjobs.cli server``) with its own
``STREAMJOBS_HOME``, a SQLite store in it and a free loopback port, after ``admin bootstrap``
has written the admin token there. Its supervisor starts each attempt's driver under the
wrapper (``python -m streamjobs.launch.wrapper ... -- spark-submit ...``) in a process group of
its own; ``drivers`` finds those wrappers by their command line, which names the home.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import psutil

from bench.server_process import STREAMJOBS, ServerProcess

POLL_SECONDS = 0.05


class BenchServer:
    """``with BenchServer(home) as server:`` a started server over a SQLite store in ``home``,
    its admin bootstrapped; every process it or its supervisor started ends on the way out."""

    def __init__(self, home: Path, *, data_root: Path) -> None:
        """Jobs read and write under ``data_root`` (their bundle's data root), apart from the
        server's ``home``."""
        self.home = home
        self._server = ServerProcess(
            home, database_url=f"sqlite:///{home / 'streamjobs.db'}", data_roots=[data_root]
        )
        self.url = self._server.url
        self._client: httpx.Client | None = None

    def __enter__(self) -> BenchServer:
        self.home.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [*STREAMJOBS, "admin", "bootstrap"],
            env=self._server.environment,
            capture_output=True,
            check=True,
            timeout=120,
        )
        token = (self.home / "admin-token").read_text(encoding="utf-8").strip()
        self._server.start()
        headers = {"Authorization": f"Bearer {token}"}
        self._client = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._client is not None:
            self._client.close()
        self._server.stop()
        self.kill_drivers()

    @property
    def api(self) -> httpx.Client:
        if self._client is None:
            raise RuntimeError("the server is not started")
        return self._client

    def put_job(self, manifest: dict[str, Any]) -> None:
        name = manifest["metadata"]["name"]
        self._check(self.api.put(f"/api/v1/jobs/{name}", json=manifest))

    def run(self, job: str) -> str:
        """Run the job (a new application); its id."""
        response = self._check(self.api.post(f"/api/v1/jobs/{job}/run"))
        return str(response.json()["id"])

    def abort(self, application: str) -> None:
        self.api.post(f"/api/v1/applications/{application}/abort")

    def application(self, application: str) -> dict[str, Any]:
        document: dict[str, Any] = self._check(
            self.api.get(f"/api/v1/applications/{application}")
        ).json()
        return document

    def events(self, application: str) -> list[dict[str, Any]]:
        response = self._check(self.api.get(f"/api/v1/applications/{application}/events"))
        items: list[dict[str, Any]] = response.json()["items"]
        return items

    def wait_for_state(self, application: str, state: str, timeout: float) -> dict[str, Any]:
        """The application once it is in ``state``; RuntimeError if it ends otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            document = self.application(application)
            if document["state"] == state:
                return document
            if document["state"] in {"COMPLETED", "FAILED", "ABORTED", "STOPPED"}:
                raise RuntimeError(f"application {application} ended {document['state']}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"application {application} not {state} after {timeout:g} s")
            time.sleep(POLL_SECONDS * 4)

    def drivers(self) -> list[psutil.Process]:
        """The live driver wrappers this server's supervisor started."""
        found = []
        for process in psutil.process_iter(["cmdline"]):
            cmdline = process.info["cmdline"] or []
            if "streamjobs.launch.wrapper" in cmdline and any(
                str(self.home) in part for part in cmdline
            ):
                found.append(process)
        return found

    def kill_driver(self) -> tuple[float, psutil.Process]:
        """SIGKILL the JVM and Python of the one live driver, not its wrapper, as a crash would;
        when the signals were sent (epoch seconds) and the wrapper. Returns once they are gone."""
        (wrapper,) = self.drivers()
        children = wrapper.children(recursive=True)
        killed_at = time.time()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.send_signal(signal.SIGKILL)
        psutil.wait_procs(children, timeout=60)
        return killed_at, wrapper

    def kill_drivers(self) -> None:
        for wrapper in self.drivers():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(wrapper.pid, signal.SIGKILL)

    def _check(self, response: httpx.Response) -> httpx.Response:
        if not response.is_success:
            raise RuntimeError(
                f"{response.request.method} {response.request.url.path}: "
                f"{response.status_code} {response.text}"
            )
        return response


def epoch_seconds(timestamp: str | None) -> float | None:
    """An API timestamp (ISO 8601; UTC when it names no zone) as seconds since the epoch."""
    if timestamp is None:
        return None
    moment = datetime.fromisoformat(timestamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
