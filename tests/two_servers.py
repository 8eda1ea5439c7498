"""Several real ``streamjobs server`` processes on one store, for the tests of leadership: each
with its own name, port, home and console file, all with one secret key (the store's sealed
secrets open on any of them) and one admin token (bootstrapped once, in the store).

``ServerProcess`` starts, SIGKILLs, pauses (SIGSTOP) and continues one server and reads its
``/healthz`` and its console; ``servers_on`` makes the set and kills them (and every driver
started under their homes) at the end. Callers pick the store and any other settings (``env``):
the multi-host tests run the same processes inside network namespaces through ``command``.
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from streamjobs.launch.ports import free_loopback_port

STREAMJOBS = [sys.executable, "-m", "streamjobs.cli"]
START_SECONDS = 60.0


@dataclass
class ServerProcess:
    """One server process; ``command`` prefixes its command line (e.g. ``ip netns exec NS``)."""

    name: str
    env: dict[str, str]
    url: str
    console: Path
    command: Sequence[str] = ()
    process: subprocess.Popen[str] | None = None

    @property
    def home(self) -> Path:
        return Path(self.env["STREAMJOBS_HOME"])

    def start(self) -> None:
        """Start the server and wait until it answers ``/healthz``."""
        self.launch()
        self.wait_until_healthy()

    def launch(self) -> subprocess.Popen[str]:
        """Start the server without waiting for it."""
        with self.console.open("a") as output:
            self.process = subprocess.Popen(
                [*self.command, *STREAMJOBS, "server"],
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        return self.process

    def wait_until_healthy(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"server {self.name} exited: {self.console_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            time.sleep(0.2)
        raise AssertionError(f"server {self.name} did not answer in {START_SECONDS:g} s")

    def kill(self) -> None:
        """SIGKILL the server (its drivers run in sessions of their own and live on)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def pause(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGCONT)

    def health(self) -> dict[str, Any]:
        answer: dict[str, Any] = httpx.get(f"{self.url}/healthz", timeout=5).json()
        return answer

    def role(self) -> str | None:
        """Its ``/healthz`` role; None when it does not answer."""
        try:
            return str(self.health()["role"])
        except httpx.HTTPError:
            return None

    def console_text(self) -> str:
        return self.console.read_text(errors="replace") if self.console.exists() else ""

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )


@dataclass
class Servers:
    """The servers of one store and the admin token that works on all of them."""

    token: str
    members: dict[str, ServerProcess] = field(default_factory=dict)

    def __getitem__(self, name: str) -> ServerProcess:
        return self.members[name]

    def leaders(self) -> list[str]:
        return [name for name, server in self.members.items() if server.role() == "leader"]


def server_env(
    tmp_path: Path,
    name: str,
    *,
    database_url: str,
    secret_key: str,
    lease_seconds: float,
    env: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of server ``name``: its home under ``tmp_path``, a free port on
    127.0.0.1 (``env`` may say otherwise), the store, the shared key and the lease."""
    result = dict(os.environ)
    result.update(
        STREAMJOBS_HOME=str(tmp_path / name / "home"),
        STREAMJOBS_PORT=str(free_loopback_port()),
        STREAMJOBS_DATABASE_URL=database_url,
        STREAMJOBS_SECRET_KEY=secret_key,
        STREAMJOBS_SERVER_NAME=name,
        STREAMJOBS_LEASE_SECONDS=str(lease_seconds),
        STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([(tmp_path / "data").as_uri()]),
    )
    result.update(env or {})
    return result


@contextlib.contextmanager
def servers_on(
    tmp_path: Path,
    database_url: str,
    names: Sequence[str] = ("alpha", "beta"),
    *,
    lease_seconds: float = 4.0,
    env: Callable[[str], dict[str, str]] | None = None,
    command: Callable[[str], Sequence[str]] | None = None,
    host: Callable[[str], str] | None = None,
) -> Iterator[Servers]:
    """Servers ``names`` on one store, bootstrapped, none started yet; each killed at the end,
    and every driver started under their homes with them. ``env(name)``, ``command(name)`` and
    ``host(name)`` (the address its URL names; default 127.0.0.1) set each server apart."""
    secret_key = base64.urlsafe_b64encode(os.urandom(32)).decode()
    members: dict[str, ServerProcess] = {}
    for name in names:
        environment = server_env(
            tmp_path,
            name,
            database_url=database_url,
            secret_key=secret_key,
            lease_seconds=lease_seconds,
            env=env(name) if env is not None else None,
        )
        address = host(name) if host is not None else "127.0.0.1"
        members[name] = ServerProcess(
            name=name,
            env=environment,
            url=f"http://{address}:{environment['STREAMJOBS_PORT']}",
            console=tmp_path / f"{name}.console",
            command=command(name) if command is not None else (),
        )
    first = members[names[0]]
    bootstrap = subprocess.run(
        [*first.command, *STREAMJOBS, "admin", "bootstrap"],
        env=first.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bootstrap.returncode == 0, bootstrap.stderr
    token = (first.home / "admin-token").read_text().strip()
    try:
        yield Servers(token=token, members=members)
    finally:
        for member in members.values():
            member.kill()  # a paused one too: SIGKILL needs no SIGCONT
        for process in drivers_under([member.home for member in members.values()]):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def drivers_under(homes: Sequence[Path]) -> list[psutil.Process]:
    """The live driver wrappers whose attempt directories are under one of ``homes``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "streamjobs.launch.wrapper" in cmdline and any(
            str(home) in part for home in homes for part in cmdline
        ):
            found.append(process)
    return found


def wait_until(what: str, check: Callable[[], Any], *, seconds: float) -> Any:
    """``check()``'s first true answer within ``seconds``; an AssertionError naming ``what``
    after that."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}")
        time.sleep(0.2)
