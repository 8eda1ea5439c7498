"""A throwaway PostgreSQL cluster on this machine, for the tests and the bench's figure 4.

``PostgresServer`` creates a cluster with ``initdb``, listening only on 127.0.0.1 (and on a unix
socket inside its own directory) with trust authentication, and hands out one fresh database at a
time. Started with another ``listen_address`` of this machine (the multi-host tests' bridge
address), it listens there instead and trusts the clients of that address's /24, where the tests'
network namespaces are. As root it runs the server as the ``postgres`` OS user, because ``initdb``
refuses to run as root. Durability is off (``fsync``...): nothing here is meant to be kept.
"""

from __future__ import annotations

import glob
import ipaddress
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

import psycopg
from psycopg import sql

from streamjobs.launch.ports import free_loopback_port

POSTGRES_SEARCH_PATTERN = "/usr/lib/postgresql/*/bin"
SUPERUSER = "postgres"
LOOPBACK = "127.0.0.1"
CLIENT_PREFIX_LENGTH = 24
SERVER_SETTINGS = {
    "fsync": "off",  # a throwaway cluster: durability only costs time
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


class ServiceUnavailableError(Exception):
    """The programs a service needs are not installed on this machine."""


def find_postgres_bin_dir() -> Path:
    """The directory holding ``pg_ctl`` and ``initdb``: from PATH, else Debian's newest version."""
    on_path = shutil.which("pg_ctl")
    candidates = [Path(on_path).parent] if on_path else []
    candidates += sorted(
        (Path(found) for found in glob.glob(POSTGRES_SEARCH_PATTERN)),
        key=lambda bin_dir: _version_key(bin_dir.parent.name),
        reverse=True,
    )
    for bin_dir in candidates:
        if (bin_dir / "pg_ctl").is_file() and (bin_dir / "initdb").is_file():
            return bin_dir
    raise ServiceUnavailableError(
        "PostgreSQL was not found (no pg_ctl/initdb on PATH or in "
        f"{POSTGRES_SEARCH_PATTERN}); install it, e.g. `apt-get install postgresql`"
    )


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


@dataclass
class PostgresServer:
    """A running throwaway PostgreSQL cluster; ``stop()`` shuts it down and deletes it."""

    bin_dir: Path
    directory: Path
    port: int
    os_user: str | None
    listen_address: str = LOOPBACK

    @classmethod
    def start(cls, bin_dir: Path, *, listen_address: str = LOOPBACK) -> PostgresServer:
        """Create a cluster in a new temporary directory and start it on a free port of
        ``listen_address`` (an address of this machine)."""
        os_user = _server_os_user()
        directory = Path(tempfile.mkdtemp(prefix="streamjobs-postgres-"))
        if os_user is not None:
            account = pwd.getpwnam(os_user)
            os.chown(directory, account.pw_uid, account.pw_gid)
        port = free_loopback_port()
        server = cls(
            bin_dir=bin_dir,
            directory=directory,
            port=port,
            os_user=os_user,
            listen_address=listen_address,
        )
        try:
            server._init_cluster()
            server._trust_clients()
            server._start()
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return server

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    def url_for(self, database: str) -> str:
        """The SQLAlchemy URL of ``database`` on this server."""
        return f"postgresql+psycopg://{SUPERUSER}@{self.listen_address}:{self.port}/{database}"

    def create_database(self) -> str:
        """Create an empty database with a unique name and return that name."""
        name = f"test_{uuid4().hex[:16]}"
        self._administer(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected to it."""
        self._administer(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its directory."""
        try:
            self._run("pg_ctl", "stop", "--pgdata", str(self.data_dir), "--mode", "fast", "--wait")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _init_cluster(self) -> None:
        self._run(
            "initdb",
            "--pgdata",
            str(self.data_dir),
            "--username",
            SUPERUSER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )

    def _trust_clients(self) -> None:
        """Off loopback, also trust connections from the listen address's /24."""
        if self.listen_address == LOOPBACK:
            return
        clients = ipaddress.ip_interface(f"{self.listen_address}/{CLIENT_PREFIX_LENGTH}").network
        with (self.data_dir / "pg_hba.conf").open("a", encoding="utf-8") as rules:
            rules.write(f"host all all {clients} trust\n")

    def _start(self) -> None:
        settings = {
            **SERVER_SETTINGS,
            "listen_addresses": self.listen_address,
            "port": str(self.port),
            "unix_socket_directories": str(self.directory),
        }
        options = " ".join(f"-c {name}={value}" for name, value in settings.items())
        try:
            self._run(
                "pg_ctl",
                "start",
                "--pgdata",
                str(self.data_dir),
                "--log",
                str(self.log_file),
                "--options",
                options,
                "--wait",
                "--timeout",
                "60",
            )
        except RuntimeError as failure:
            log = self.log_file.read_text() if self.log_file.exists() else "(no server log)"
            raise RuntimeError(f"{failure}\nserver log:\n{log}") from failure

    def _run(self, program: str, *arguments: str) -> None:
        """Run one of PostgreSQL's programs as the server's OS user; RuntimeError if it fails."""
        command = [str(self.bin_dir / program), *arguments]
        if self.os_user is not None:
            command = ["runuser", "-u", self.os_user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.directory)
        if done.returncode != 0:
            raise RuntimeError(
                f"{program} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}"
            )

    def _administer(self, statement: sql.Composed) -> None:
        with psycopg.connect(
            host=self.listen_address,
            port=self.port,
            user=SUPERUSER,
            dbname="postgres",
            autocommit=True,
        ) as connection:
            connection.execute(statement)


def _server_os_user() -> str | None:
    """Who runs the server: the current user, or as root (which initdb refuses) ``postgres``."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise ServiceUnavailableError(
            f"running as root, but there is no {SUPERUSER!r} OS user to run PostgreSQL as"
        ) from None
    if shutil.which("runuser") is None:
        raise ServiceUnavailableError(
            "running as root, but `runuser` is missing to drop privileges"
        )
    return SUPERUSER
