"""A ``streamjobs server`` as a child process of the harness, the way a user starts one.

``python -m streamjobs.cli server`` over a given home and store, on a free loopback port, in a
process group of its own; started when it answers ``/healthz``, stopped with its whole group.
Figures 2 and 3 drive one with its supervisor (``streamjobs_server.BenchServer``); figure 4
loads one without (``figure_control_plane``). Its output goes to ``home/server.out`` and
``home/server.err``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import httpx
import psutil

from streamjobs.launch.ports import free_loopback_port

STREAMJOBS = (sys.executable, "-m", "streamjobs.cli")
START_SECONDS = 90.0
MIB = 1024 * 1024


class ServerProcess:
    """``with ServerProcess(home, database_url=...) as server:`` a server that answers; on the
    way out SIGTERM to its process group, SIGKILL if it has not ended within 15 s."""

    def __init__(
        self,
        home: Path,
        *,
        database_url: str,
        supervisor: bool = True,
        data_roots: Sequence[Path] = (),
    ) -> None:
        """``data_roots``: where the ``default`` bundle's jobs may read and write (seeded on the
        server's first start)."""
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
        self.start_seconds = 0.0
        """How long the server took to answer."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("the server is not started")
        return self._process.pid

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system), in seconds."""
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)

    def rss_mib(self) -> float:
        """The server process's resident memory now, in MiB."""
        return float(psutil.Process(self.pid).memory_info().rss) / MIB

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server and return once it answers; ``RuntimeError`` if it exits first or
        does not answer within ``START_SECONDS`` (it is stopped then)."""
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
        self.start_seconds = time.monotonic() - started

    def stop(self) -> None:
        """SIGTERM to the server's process group, then SIGKILL after 15 s; nothing if ended."""
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
