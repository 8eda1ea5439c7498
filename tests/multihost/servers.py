"""``streamjobs server`` processes on hosts of the namespace cluster, for the multi-host tests.

A server runs inside its host's namespace (``ip netns exec``), bound to the host's address, with
``STREAMJOBS_PUBLIC_URL`` its own URL and ``STREAMJOBS_SPARK_MASTER`` the cluster's master; the
local drivers it starts run on that host too. Its console goes to ``<home>.console.log``. The admin
is bootstrapped as ``tests/e2e/test_applications.py::running_server`` does; servers that share a
database (``database_url``) share one bootstrap, its token and a secret key, as servers of one
deployment would. The ``server_in`` fixture kills every server it started (and their drivers) at
the end of the test.

    def test_x(netns_cluster, server_in, tmp_path):
        server = server_in(netns_cluster.control, tmp_path, env_overrides={...})
        with server.client() as api: ...
        server.pause(); ...; server.resume(); server.kill(); server.start()
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from streamjobs.devtools.netns import Host
from tests.multihost.cluster import NetnsCluster

STREAMJOBS = [sys.executable, "-m", "streamjobs.cli"]
HEALTHY_WITHIN_SECONDS = 90.0
STOP_WITHIN_SECONDS = 60.0
CONSOLE_LINES_IN_ERRORS = 40


@dataclass(frozen=True)
class Admin:
    token: str
    secret_key: str | None


_admins: dict[str, Admin] = {}
"""The admin of each shared database, bootstrapped once for the whole session."""


@dataclass
class NamespaceServer:
    """One ``streamjobs server`` on ``host``; ``start()`` again after ``kill()`` or ``stop()``."""

    host: Host
    url: str
    token: str
    env: dict[str, str]
    console: Path
    process: subprocess.Popen[bytes] | None = None
    paused: bool = field(default=False, init=False)

    @property
    def home(self) -> Path:
        return Path(self.env["STREAMJOBS_HOME"])

    def start(self) -> None:
        """Start the server in its host's namespace and wait until ``/healthz`` answers."""
        with self.console.open("ab") as console:
            self.process = subprocess.Popen(
                self.host.command([*STREAMJOBS, "server"]),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.paused = False
        self._wait_until_healthy()

    def kill(self) -> None:
        """SIGKILL the server (its drivers, in their own sessions, keep running)."""
        self._signal(signal.SIGKILL)
        self._wait(STOP_WITHIN_SECONDS)

    def stop(self) -> int:
        """SIGTERM: the server shuts down gracefully; its exit code."""
        self.resume()
        self._signal(signal.SIGTERM)
        return self._wait(STOP_WITHIN_SECONDS)

    def pause(self) -> None:
        """SIGSTOP the server: it neither answers nor writes until ``resume()``."""
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.paused:
            self._signal(signal.SIGCONT)
            self.paused = False

    def client(self, timeout: float = 30) -> httpx.Client:
        """An HTTP client signed in as the admin."""
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def console_tail(self) -> str:
        if not self.console.is_file():
            return f"(no console log at {self.console})"
        lines = self.console.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join([f"last lines of {self.console}:", *lines[-CONSOLE_LINES_IN_ERRORS:]])

    def kill_with_drivers(self) -> None:
        """The end of a test: the server and every driver started under its home, killed."""
        if self.process is not None and self.process.poll() is None:
            self.resume()
            self.kill()
        for driver in _drivers_under(self.home):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(driver.pid, signal.SIGKILL)

    def _signal(self, signal_number: signal.Signals) -> None:
        if self.process is None:
            raise AssertionError(f"the server on {self.host.name} was never started")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal_number)

    def _wait(self, timeout: float) -> int:
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the server on {self.host.name} did not exit in {timeout:g} s\n"
                f"{self.console_tail()}"
            ) from None

    def _wait_until_healthy(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + HEALTHY_WITHIN_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"the server on {self.host.name} exited with code "
                    f"{self.process.returncode}\n{self.console_tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        raise AssertionError(
            f"the server at {self.url} was not healthy in {HEALTHY_WITHIN_SECONDS:g} s\n"
            f"{self.console_tail()}"
        )


class ServerStarter:
    """What the ``server_in`` fixture gives: ``server_in(host, tmp_path, ...)`` starts a
    server, and ``kill_all()`` ends every server it started."""

    def __init__(self, cluster: NetnsCluster) -> None:
        self.cluster = cluster
        self.started: list[NamespaceServer] = []

    def __call__(
        self,
        host: Host,
        tmp_path: Path,
        *,
        env_overrides: Mapping[str, str] | None = None,
        database_url: str | None = None,
    ) -> NamespaceServer:
        """A bootstrapped, healthy server on ``host`` with its files under ``tmp_path``; on
        ``database_url`` (shared with other servers) or else its own SQLite store."""
        port = host.free_port()
        name = f"{host.name}-{port}"
        home = tmp_path / f"server-{name}"
        url = f"http://{host.address}:{port}"
        env = dict(os.environ)
        env.update(
            STREAMJOBS_HOME=str(home),
            STREAMJOBS_HOST=host.address,
            STREAMJOBS_PORT=str(port),
            STREAMJOBS_PUBLIC_URL=url,
            STREAMJOBS_SERVER_NAME=name,
            STREAMJOBS_DATABASE_URL=database_url or f"sqlite:///{tmp_path / f'{name}.db'}",
            STREAMJOBS_SPARK_MASTER=self.cluster.master_url,
            STREAMJOBS_SPARK_MASTER_REST_URL=self.cluster.rest_url,
            STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([(tmp_path / "data").as_uri()]),
        )
        admin = _admins.get(database_url) if database_url is not None else None
        if admin is None:
            secret_key = _new_secret_key() if database_url is not None else None
            if secret_key is not None:
                env["STREAMJOBS_SECRET_KEY"] = secret_key
            env.update(env_overrides or {})
            admin = Admin(token=_bootstrap(env, home), secret_key=secret_key)
            if database_url is not None:
                _admins[database_url] = admin
        else:
            if admin.secret_key is not None:
                env["STREAMJOBS_SECRET_KEY"] = admin.secret_key
            env.update(env_overrides or {})
        server = NamespaceServer(
            host=host,
            url=url,
            token=admin.token,
            env=env,
            console=tmp_path / f"server-{name}.console.log",
        )
        self.started.append(server)
        server.start()
        return server

    def kill_all(self) -> None:
        for server in self.started:
            server.kill_with_drivers()
        self.cluster.spark.kill_submitted_drivers()


def _bootstrap(env: dict[str, str], home: Path) -> str:
    done = subprocess.run(
        [*STREAMJOBS, "admin", "bootstrap"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    token_file = home / "admin-token"
    if done.returncode != 0 or not token_file.is_file():
        raise AssertionError(
            f"`streamjobs admin bootstrap` failed (exit {done.returncode}) or saved no token in "
            f"{token_file}:\n{done.stdout}{done.stderr}"
        )
    return token_file.read_text().strip()


def _new_secret_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode("ascii")


def _drivers_under(home: Path) -> list[psutil.Process]:
    """The live driver wrappers whose attempt directories are under ``home``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "streamjobs.launch.wrapper" in cmdline and any(str(home) in part for part in cmdline):
            found.append(process)
    return found
