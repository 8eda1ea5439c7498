"""Opening the store: engine settings per backend, and migrations."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.exc import DBAPIError

from streamjobs.domain.access import BundleGrant, Permission, Subject, SubjectKind
from streamjobs.store import NodeTypeRecord, Store, create_engine_for, migrate
from streamjobs.store.db import MIGRATIONS_DIRECTORY
from streamjobs.store.tables import Base, NodeTypeRow, ResourceBundleRow

MOMENT = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
HEAD_REVISION = ScriptDirectory(str(MIGRATIONS_DIRECTORY)).get_current_head()


def test_sqlite_store_gets_its_directory_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet" / "there.db"
    engine = create_engine_for(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            pragma = connection.exec_driver_sql
            assert pragma("PRAGMA journal_mode").scalar() == "wal"
            assert pragma("PRAGMA foreign_keys").scalar() == 1
            assert pragma("PRAGMA busy_timeout").scalar() == 5000
        assert path.is_file()
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "url", ["postgresql://streamjobs@db.example/jobs", "postgresql+psycopg://streamjobs@db/jobs"]
)
def test_postgresql_urls_are_driven_by_psycopg_3(url: str) -> None:
    engine = create_engine_for(url)
    assert engine.dialect.name == "postgresql"
    assert engine.dialect.driver == "psycopg"
    engine.dispose()


@pytest.mark.parametrize(
    "url", ["mysql://root:secret@db/jobs", "postgresql+psycopg2://streamjobs@db/jobs"]
)
def test_other_databases_are_refused_without_echoing_the_url(url: str) -> None:
    with pytest.raises(ValueError, match="unsupported database URL scheme") as refused:
        create_engine_for(url)
    assert "secret" not in str(refused.value)


def schema_state(engine: Engine) -> dict[str, Any]:
    with engine.connect() as connection:
        return {
            "revisions": connection.scalars(text("SELECT version_num FROM alembic_version")).all(),
            "node types": connection.execute(select(NodeTypeRow.__table__)).all(),
            "bundles": connection.execute(select(ResourceBundleRow.__table__)).all(),
        }


def test_migrating_again_changes_nothing(engine: Engine) -> None:
    migrated_once = schema_state(engine)
    migrate(engine)
    assert schema_state(engine) == migrated_once
    assert migrated_once["revisions"] == [HEAD_REVISION]


def test_concurrent_migrations_of_a_new_database_take_turns(database_url: str) -> None:
    engine = create_engine_for(database_url)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for done in [pool.submit(migrate, engine) for _ in range(2)]:
                done.result()
        assert schema_state(engine)["revisions"] == [HEAD_REVISION]
        assert len(schema_state(engine)["node types"]) == 3
    finally:
        engine.dispose()


def test_a_failed_migration_leaves_nothing_half_made(database_url: str) -> None:
    engine = create_engine_for(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE users (squatter INTEGER)"))
        with pytest.raises(DBAPIError):
            migrate(engine)
        assert set(inspect(engine).get_table_names()) == {"users"}
    finally:
        engine.dispose()


def test_the_first_migration_seeds_the_default_bundle_and_three_node_types(store: Store) -> None:
    with store.transaction() as repos:
        assert [bundle.name for bundle in repos.bundles.list()] == ["default"]
        assert repos.node_types.list() == [
            NodeTypeRecord(name="small", cores=1, memory_mb=1024),
            NodeTypeRecord(name="medium", cores=2, memory_mb=4096),
            NodeTypeRecord(name="large", cores=4, memory_mb=8192),
        ]


def test_the_migrated_schema_matches_the_table_classes(engine: Engine) -> None:
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []


def test_store_open_creates_and_migrates_the_database(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'home' / 'streamjobs.db'}")
    try:
        with store.transaction() as repos:
            assert repos.bundles.exists("default")
    finally:
        store.close()


def test_undoing_the_bundle_versions_keeps_every_grant_and_secret(
    store: Store, engine: Engine
) -> None:
    grant = BundleGrant("default", Subject(SubjectKind.USER, "admin"), Permission.VIEW)
    with store.transaction() as repos:
        repos.grants.set_bundle_grants("default", [grant])
        repos.secrets.add(
            bundle="default", name="token", ciphertext=b"sealed", actor="admin", at=MOMENT
        )
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY).replace("%", "%%"))

    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0006")
    with engine.begin() as connection:
        columns = {column["name"] for column in inspect(connection).get_columns("resource_bundles")}
        grants = connection.execute(text("SELECT count(*) FROM bundle_grants")).scalar_one()
        secrets = connection.execute(text("SELECT count(*) FROM secrets")).scalar_one()
    migrate(engine)

    assert "version" not in columns
    assert (grants, secrets) == (1, 1)
    with store.transaction() as repos:
        assert repos.grants.bundle_grants(bundle="default") == [grant]
        assert repos.bundles.get("default").version == 1
