"""The store is checked before it is migrated: an empty database is a fresh store, a streamjobs
store is migrated, anything else (another program's tables, a schema from a newer streamjobs,
a file that is empty or no database) stops the start with a message saying what to do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from streamjobs.domain.errors import StoreUnusable
from streamjobs.services.container import open_store
from streamjobs.settings import Settings
from streamjobs.store import create_engine_for, migrate
from streamjobs.store.preflight import check_store, check_store_file


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = create_engine_for(database_url)
    yield engine
    engine.dispose()


def test_an_empty_database_and_a_streamjobs_store_pass(engine: Engine) -> None:
    check_store(engine)
    migrate(engine)
    check_store(engine)


def test_another_programs_tables_in_a_sqlite_file_stop_the_start(tmp_path: Path) -> None:
    engine = create_engine_for(f"sqlite:///{tmp_path / 'streamjobs.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY)"))
            connection.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"))
        with pytest.raises(StoreUnusable, match=r"not a streamjobs store \(customers, invoices\)"):
            check_store(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_other_programs_tables_beside_a_postgresql_store_are_allowed(postgres_url: str) -> None:
    engine = create_engine_for(postgres_url)
    try:
        with engine.begin() as connection:  # as PostGIS leaves in every database it is in
            connection.execute(text("CREATE TABLE spatial_ref_sys (srid INTEGER PRIMARY KEY)"))
        check_store(engine)
        migrate(engine)
        check_store(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_half_made_streamjobs_schema_in_postgresql_stops_the_start(postgres_url: str) -> None:
    engine = create_engine_for(postgres_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE spatial_ref_sys (srid INTEGER PRIMARY KEY)"))
            connection.execute(text("CREATE TABLE jobs (id INTEGER PRIMARY KEY)"))
        with pytest.raises(StoreUnusable, match=r"named like a streamjobs store's \(jobs\)"):
            check_store(engine)
    finally:
        engine.dispose()


def test_another_programs_alembic_schema_stops_the_start_as_foreign(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32))"))
        connection.execute(text("INSERT INTO alembic_version VALUES ('a1b2c3')"))
        connection.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY)"))
    with pytest.raises(StoreUnusable, match="not a streamjobs store"):
        check_store(engine)


def test_a_schema_from_a_newer_streamjobs_stops_the_start(engine: Engine) -> None:
    migrate(engine)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099_from_the_future'"))
    with pytest.raises(StoreUnusable, match=r"newer streamjobs.*0099_from_the_future"):
        check_store(engine)


def test_an_empty_file_where_the_store_should_be_stops_the_start(tmp_path: Path) -> None:
    database = tmp_path / "streamjobs.db"
    database.touch()
    with pytest.raises(StoreUnusable, match=r"empty file.*remove it to start afresh"):
        check_store_file(database)
    assert database.stat().st_size == 0


def test_no_file_yet_is_a_fresh_store(tmp_path: Path) -> None:
    check_store_file(tmp_path / "streamjobs.db")


def test_a_directory_where_the_store_should_be_stops_the_start(tmp_path: Path) -> None:
    (tmp_path / "streamjobs.db").mkdir()
    with pytest.raises(StoreUnusable, match="is not a file"):
        check_store_file(tmp_path / "streamjobs.db")


def test_a_file_that_is_no_sqlite_database_stops_the_start(tmp_path: Path) -> None:
    database = tmp_path / "streamjobs.db"
    database.write_text("name,amount\nalice,3\n" * 1000)
    engine = create_engine_for(f"sqlite:///{database}")
    try:
        check_store_file(database)
        with pytest.raises(StoreUnusable, match="not a SQLite database"):
            check_store(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_the_server_opens_a_postgresql_database_holding_other_tables(
    postgres_url: str, tmp_path: Path
) -> None:
    engine = create_engine_for(postgres_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE spatial_ref_sys (srid INTEGER PRIMARY KEY)"))
    engine.dispose()

    store = open_store(Settings(home=tmp_path / "home", database_url=postgres_url))
    try:
        with store.reading() as repos:
            assert repos.jobs.find("orders") is None
    finally:
        store.close()
