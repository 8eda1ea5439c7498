"""`streamjobs server` checks its store before it serves anything: an empty or foreign database
file, a schema from a newer streamjobs, or a key file gone that the stored secrets need, each
stops it with a message on stderr that says what to do, and a non-zero exit."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.launch.ports import free_loopback_port
from streamjobs.services.container import open_services
from streamjobs.settings import Settings

STREAMJOBS = [sys.executable, "-m", "streamjobs.cli"]
ADMIN = Actor(Principal("admin", is_admin=True))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return home


def refused_start(home: Path) -> str:
    """Start the server on ``home``, check that it stopped before serving; its stderr."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("STREAMJOBS_")}
    env.update(STREAMJOBS_HOME=str(home), STREAMJOBS_PORT=str(free_loopback_port()))
    started = subprocess.run(
        [*STREAMJOBS, "server"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert started.returncode != 0, started.stdout
    assert "streamjobs server on" not in started.stdout
    assert "Traceback" not in started.stderr
    return " ".join(started.stderr.split())  # the console wraps long lines


def migrated_store(home: Path) -> Path:
    open_services(Settings(home=home)).store.close()
    return home / "streamjobs.db"


def test_an_empty_database_file_is_not_taken_for_a_fresh_store(home: Path) -> None:
    database = home / "streamjobs.db"
    database.touch(mode=0o600)
    message = refused_start(home)
    assert f"{database} is an empty file where the store was expected" in message
    assert "remove it to start afresh, or restore the store from a backup" in message
    assert database.stat().st_size == 0


def test_a_file_that_is_no_database_stops_the_start(home: Path) -> None:
    database = home / "streamjobs.db"
    database.write_text("these are my notes, not a database\n" * 200)
    message = refused_start(home)
    assert f"{database} is not a SQLite database" in message
    assert "STREAMJOBS_DATABASE_URL" in message


def test_another_programs_database_stops_the_start(home: Path) -> None:
    with closing(sqlite3.connect(home / "streamjobs.db")) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        connection.commit()
    message = refused_start(home)
    assert "holds tables that are not a streamjobs store (customers)" in message
    with closing(sqlite3.connect(home / "streamjobs.db")) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        assert [name for (name,) in tables] == ["customers"]  # nothing added to it


def test_a_schema_from_a_newer_streamjobs_stops_the_start(home: Path) -> None:
    with closing(sqlite3.connect(migrated_store(home))) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
        connection.commit()
    message = refused_start(home)
    assert "has a schema from a newer streamjobs (revision 0099_from_the_future" in message
    assert "restore a backup made by this one" in message


def test_a_missing_key_file_that_stored_secrets_need_stops_the_start(home: Path) -> None:
    services = open_services(Settings(home=home))
    services.secrets.put("default", "api-token", "s3cret", actor=ADMIN)
    services.store.close()
    key_file = home / "secret.key"
    key_file.unlink()
    message = refused_start(home)
    assert f"the key file {key_file} that opens them is missing" in message
    assert "restore it from your backup" in message
    assert not key_file.exists()  # no new key that would open none of them


def test_a_missing_key_file_with_no_secrets_stored_is_made_anew(home: Path) -> None:
    migrated_store(home)
    (home / "secret.key").unlink()
    open_services(Settings(home=home)).store.close()
    assert (home / "secret.key").exists()
