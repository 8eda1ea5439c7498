"""A store that cannot be written (a full disk, a read-only or locked database) answers 503 with
a problem document that says why, never 500; reads go on, and writes work again once the cause
is gone, without a restart. Against a real server whose SQLite store is on a small tmpfs the
test mounts (root only), and one on PostgreSQL made read-only."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import make_url

from streamjobs.api.errors import install_error_handlers
from streamjobs.composition import Server, build_server
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.settings import Settings
from tests.api.problems import problem_of
from tests.factories import pipeline_manifest
from tests.live_server import live_server

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs: root only")


@dataclass
class Outage:
    server: Server
    api: httpx.Client
    password: str

    @property
    def database(self) -> Path:
        return self.server.settings.resolved_home / "streamjobs.db"

    def put_job(self, name: str) -> httpx.Response:
        return self.api.put(f"/api/v1/jobs/{name}", json=pipeline_manifest(name))

    def job_names(self) -> list[str]:
        listed = self.api.get("/api/v1/jobs")
        assert listed.status_code == 200, listed.text
        return sorted(item["metadata"]["name"] for item in listed.json()["items"])


def unavailable(response: httpx.Response, cause: str) -> None:
    problem = problem_of(response, 503)
    assert cause in problem["detail"]
    assert int(response.headers["Retry-After"]) > 0


@contextlib.contextmanager
def serving(settings: Settings) -> Iterator[Outage]:
    server = build_server(settings, launchers={Deployment.SINGLE_NODE: FakeLauncher()})
    try:
        admin = server.services.identity.bootstrap_admin()
        assert admin.password is not None
        with live_server(server) as url:
            headers = {"Authorization": f"Bearer {admin.token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as api:
                outage = Outage(server, api, admin.password)
                assert outage.put_job("before").status_code == 201
                yield outage
    finally:
        server.close()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        gc.collect()  # SQLite connections a kept traceback still holds close only then
        subprocess.run(["umount", str(disk)], check=True)


@pytest.fixture
def on_small_disk(small_disk: Path) -> Iterator[Outage]:
    settings = Settings(
        home=small_disk / "home",
        checkpoint_root="file:///checkpoints",
        supervisor=False,
        sqlite_busy_timeout_seconds=0.2,
    )
    with serving(settings) as outage:
        yield outage


def fill(disk: Path) -> Path:
    """Write a file on ``disk`` until no byte more fits; the file."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as file, contextlib.suppress(OSError):
        while True:
            file.write(b"\0" * 4096)
    with pytest.raises(OSError, match="No space left") as full:
        (disk / "one-more").write_bytes(b"\0" * 4096)
    assert full.value.errno == errno.ENOSPC
    return filler


@needs_root
def test_a_full_disk_refuses_writes_with_503_and_they_work_again_once_space_is_freed(
    on_small_disk: Outage, small_disk: Path
) -> None:
    # the WAL emptied first: a write that fits in its old pages would need no new space
    with contextlib.closing(sqlite3.connect(on_small_disk.database)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    filler = fill(small_disk)

    unavailable(on_small_disk.put_job("while-full"), "disk is full")
    unavailable(on_small_disk.put_job("while-full"), "disk is full")  # and again, no 500
    assert on_small_disk.job_names() == ["before"]

    filler.unlink()
    assert on_small_disk.put_job("after").status_code == 201
    assert on_small_disk.job_names() == ["after", "before"]


@needs_root
def test_a_read_only_database_refuses_writes_with_503_until_it_is_writable_again(
    on_small_disk: Outage,
) -> None:
    database = on_small_disk.database
    # connections opened before keep writing (as POSIX has it): the next ones open read-only
    on_small_disk.server.services.store.engine.dispose()
    subprocess.run(["chattr", "+i", str(database)], check=True)
    try:
        unavailable(on_small_disk.put_job("while-read-only"), "read-only")
        unavailable(on_small_disk.put_job("while-read-only"), "read-only")
        # read last: the connection it opened (read-only) is the one the next write is given
        assert on_small_disk.job_names() == ["before"]
    finally:
        subprocess.run(["chattr", "-i", str(database)], check=True)
    assert on_small_disk.put_job("after").status_code == 201
    assert on_small_disk.job_names() == ["after", "before"]


@needs_root
def test_a_locked_database_refuses_writes_with_503_after_the_busy_timeout(
    on_small_disk: Outage,
) -> None:
    holder = sqlite3.connect(on_small_disk.database, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        unavailable(on_small_disk.put_job("while-locked"), "locked by another process")
        assert on_small_disk.job_names() == ["before"]
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert on_small_disk.put_job("after").status_code == 201


@needs_root
def test_the_web_ui_shows_an_error_page_for_a_locked_database(on_small_disk: Outage) -> None:
    holder = sqlite3.connect(on_small_disk.database, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        signing_in = httpx.post(
            f"{on_small_disk.api.base_url}/signin",
            data={"user": "admin", "password": on_small_disk.password, "next": "/jobs"},
        )
    finally:
        holder.close()
    assert signing_in.status_code == 503
    assert signing_in.headers["content-type"].startswith("text/html")
    assert "locked by another process" in signing_in.text
    assert "Traceback" not in signing_in.text
    assert int(signing_in.headers["Retry-After"]) > 0


@pytest.mark.postgres
def test_a_read_only_postgresql_database_refuses_writes_with_503_until_it_is_writable(
    postgres_url: str, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path / "home", database_url=postgres_url, supervisor=False)
    url = make_url(postgres_url)
    admin_url = url.set(drivername="postgresql", database="postgres").render_as_string(False)
    with (
        serving(settings) as outage,
        psycopg.connect(admin_url, autocommit=True) as admin,
    ):

        def set_read_only(on: bool) -> None:
            # a setting of the database reaches new sessions: end those there are, as a failover
            # or a restart of the database server would
            value = "on" if on else "off"
            admin.execute(
                f'ALTER DATABASE "{url.database}" SET default_transaction_read_only = {value}'
            )
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (url.database,),
            )

        set_read_only(True)
        unavailable(outage.put_job("while-read-only"), "read-only")
        assert outage.job_names() == ["before"]
        set_read_only(False)
        assert outage.put_job("after").status_code == 201
        assert outage.job_names() == ["after", "before"]


@pytest.mark.parametrize(
    ("failure", "cause"),
    [
        (errno.ENOSPC, "disk is full"),
        (errno.EDQUOT, "quota"),
        (errno.EROFS, "read-only"),
    ],
)
def test_a_file_the_server_cannot_write_for_want_of_space_answers_503(
    failure: int, cause: str
) -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/api/v1/writes-a-file")
    def writes_a_file() -> None:
        raise OSError(failure, os.strerror(failure), "/home/apps/app-1/attempt-1")

    answer = TestClient(app).post("/api/v1/writes-a-file")
    unavailable(answer, cause)


def test_any_other_failure_to_write_a_file_stays_an_internal_error() -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/api/v1/writes-a-file")
    def writes_a_file() -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "/home/apps")

    answer = TestClient(app, raise_server_exceptions=False).post("/api/v1/writes-a-file")
    assert problem_of(answer, 500)["title"] == "Internal server error"
