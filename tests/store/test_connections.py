"""Connections in the store: adding, reading, listing, versioned updates, deleting; and finding
the jobs whose manifests mention one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound
from streamjobs.store import (
    ConnectionRecord,
    ConnectionRepository,
    Store,
    create_engine_for,
    migrate,
)
from streamjobs.store.db import MIGRATIONS_DIRECTORY
from tests.store.conftest import AddJob, NewJob


class AddConnection(Protocol):
    def __call__(self, name: str, **overrides: Any) -> ConnectionRecord: ...


def connection_fields(name: str, clock: FakeClock, **overrides: Any) -> dict[str, Any]:
    """The keyword arguments of ``ConnectionRepository.add`` for a kafka connection."""
    manifest = {"metadata": {"name": name}, "spec": {"type": "kafka", "bootstrapServers": "k:1"}}
    defaults = {
        "name": name,
        "namespace": "default",
        "connection_type": "kafka",
        "description": f"the {name} cluster",
        "manifest": manifest,
        "tags": {},
        "actor": "alice",
        "at": clock.now(),
    }
    return defaults | overrides


@pytest.fixture
def add_connection(store: Store, clock: FakeClock) -> AddConnection:
    def add(name: str, **overrides: Any) -> ConnectionRecord:
        with store.transaction() as repos:
            return repos.connections.add(**connection_fields(name, clock, **overrides))

    return add


def test_an_added_connection_reads_back_whole_at_version_1(
    store: Store, add_connection: AddConnection, clock: FakeClock
) -> None:
    added = add_connection(
        "kafka-main", tags={"team": "platform"}, namespace="data", connection_type="kafka"
    )
    with store.transaction() as repos:
        connection = repos.connections.get("kafka-main")
    assert connection == added
    assert (connection.name, connection.namespace, connection.type) == (
        "kafka-main",
        "data",
        "kafka",
    )
    assert connection.description == "the kafka-main cluster"
    assert connection.manifest["spec"] == {"type": "kafka", "bootstrapServers": "k:1"}
    assert connection.tags == {"team": "platform"}
    assert connection.version == 1
    assert (connection.created_by, connection.created_at) == ("alice", clock.now())
    assert (connection.updated_by, connection.updated_at) == ("alice", clock.now())


def test_a_missing_connection_is_none_for_find_and_not_found_for_get(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.connections.find("ghost") is None
        with pytest.raises(NotFound, match="connection 'ghost' does not exist"):
            repos.connections.get("ghost")


def test_a_taken_name_is_refused_even_when_the_race_is_lost(
    store: Store, add_connection: AddConnection, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = add_connection("kafka-main")
    with pytest.raises(AlreadyExists, match="connection 'kafka-main' already exists"):
        add_connection("kafka-main", description="another")
    # as if another transaction committed the name between our look-up and our insert
    monkeypatch.setattr(ConnectionRepository, "find", lambda self, name: None)
    with pytest.raises(AlreadyExists, match="connection 'kafka-main'"), store.transaction() as r:
        r.connections.add(**connection_fields("kafka-main", clock))
    monkeypatch.undo()
    with store.transaction() as repos:
        assert repos.connections.get("kafka-main") == first


@pytest.fixture
def catalogue(add_connection: AddConnection) -> None:
    add_connection("kafka-main")
    add_connection("kafka-backup")
    add_connection("lake", connection_type="lakehouse")
    add_connection("landing", connection_type="files")
    add_connection("pg_1", connection_type="jdbc")


def listed(store: Store, **filters: Any) -> tuple[list[str], int]:
    with store.transaction() as repos:
        connections, total = repos.connections.list(**filters)
    return [connection.name for connection in connections], total


@pytest.mark.usefixtures("catalogue")
@pytest.mark.parametrize(
    ("filters", "names", "total"),
    [
        ({}, ["kafka-backup", "kafka-main", "lake", "landing", "pg_1"], 5),
        ({"connection_type": "kafka"}, ["kafka-backup", "kafka-main"], 2),
        ({"connection_type": "jdbc"}, ["pg_1"], 1),
        ({"search": "KAFKA"}, ["kafka-backup", "kafka-main"], 2),
        ({"search": "_"}, ["pg_1"], 1),
        ({"search": "la", "connection_type": "files"}, ["landing"], 1),
        ({"limit": 2}, ["kafka-backup", "kafka-main"], 5),
        ({"limit": 2, "offset": 4}, ["pg_1"], 5),
        ({"lock_for_share": True}, ["kafka-backup", "kafka-main", "lake", "landing", "pg_1"], 5),
    ],
)
def test_list_filters_by_type_and_name_and_pages(
    store: Store, filters: dict[str, Any], names: list[str], total: int
) -> None:
    assert listed(store, **filters) == (names, total)


def update_description(store: Store, name: str, *, based_on: int, to: str, at: FakeClock) -> None:
    with store.transaction() as repos:
        connection = repos.connections.get(name)
        repos.connections.update(
            name,
            expected_version=based_on,
            manifest=connection.manifest,
            connection_type=connection.type,
            description=to,
            tags={"changed": "yes"},
            actor="bob",
            at=at.now(),
        )


def test_update_replaces_the_manifest_type_and_tags_and_bumps_the_version(
    store: Store, add_connection: AddConnection, clock: FakeClock
) -> None:
    created = add_connection("landing", tags={"team": "a"})
    clock.advance(60)
    manifest = {"metadata": {"name": "landing"}, "spec": {"type": "files", "root": "/x"}}
    with store.transaction() as repos:
        updated = repos.connections.update(
            "landing",
            expected_version=1,
            manifest=manifest,
            connection_type="files",
            description=None,
            tags={"team": "b"},
            actor="bob",
            at=clock.now(),
        )
    with store.transaction() as repos:
        assert repos.connections.get("landing") == updated
    assert (updated.version, updated.type, updated.manifest) == (2, "files", manifest)
    assert (updated.description, updated.tags) == (None, {"team": "b"})
    assert (updated.updated_by, updated.updated_at) == (
        "bob",
        created.created_at + timedelta(seconds=60),
    )
    assert (updated.created_by, updated.created_at, updated.id) == (
        created.created_by,
        created.created_at,
        created.id,
    )


def test_an_update_based_on_an_old_version_is_a_conflict_and_changes_nothing(
    store: Store, add_connection: AddConnection, clock: FakeClock
) -> None:
    add_connection("kafka-main")
    update_description(store, "kafka-main", based_on=1, to="second", at=clock)
    with store.transaction() as repos:
        before = repos.connections.get("kafka-main")
    with pytest.raises(Conflict) as conflict:
        update_description(store, "kafka-main", based_on=1, to="stale", at=clock)
    assert conflict.value.detail == (
        "connection 'kafka-main' was changed by someone else: the change was based on version 1, "
        "but the connection is now at version 2; read it again and retry"
    )
    with store.transaction() as repos:
        assert repos.connections.get("kafka-main") == before


def test_delete_honours_the_expected_version(
    store: Store, add_connection: AddConnection, clock: FakeClock
) -> None:
    add_connection("kafka-main")
    update_description(store, "kafka-main", based_on=1, to="second", at=clock)
    with pytest.raises(Conflict, match="connection 'kafka-main'"), store.transaction() as repos:
        repos.connections.delete("kafka-main", expected_version=1)
    with store.transaction() as repos:
        repos.connections.delete("kafka-main", expected_version=2)
        assert repos.connections.find("kafka-main") is None
    with pytest.raises(NotFound, match="connection 'kafka-main'"), store.transaction() as repos:
        repos.connections.delete("kafka-main")


def test_records_are_copies_that_cannot_change_the_store(
    store: Store, add_connection: AddConnection
) -> None:
    connection = add_connection("kafka-main", tags={"team": "a"})
    connection.manifest["spec"]["type"] = "tampered"
    connection.tags["team"] = "tampered"
    with store.transaction() as repos:
        stored = repos.connections.get("kafka-main")
    assert (stored.manifest["spec"]["type"], stored.tags) == ("kafka", {"team": "a"})


def test_jobs_are_found_by_a_text_their_manifest_holds(store: Store, add_job: AddJob) -> None:
    def with_dataset(dataset: str) -> dict[str, Any]:
        inputs = [{"name": "x", "dataset": dataset, "format": "kafka"}]
        return {"metadata": {"name": "n"}, "spec": {"pipeline": {"inputs": inputs}}}

    add_job("reads-main", manifest=with_dataset("kafka-main:orders"))
    add_job("reads-main-2", manifest=with_dataset("kafka-main:refunds"))
    add_job("reads-backup", manifest=with_dataset("kafka-main-backup:orders"))
    add_job("percent", manifest=with_dataset("a%b:c"))
    with store.transaction() as repos:
        assert list(repos.jobs.manifests_mentioning('"kafka-main:')) == [
            "reads-main",
            "reads-main-2",
        ]
        found = repos.jobs.manifests_mentioning('"a%b:')
        assert found == {"percent": with_dataset("a%b:c")}
        assert repos.jobs.manifests_mentioning('"nothing:') == {}


def test_a_store_at_the_first_schema_migrates_keeping_its_jobs(
    database_url: str, new_job: NewJob
) -> None:
    engine = create_engine_for(database_url)
    try:
        migrate_to(engine, "0001")
        store = Store(engine)
        with store.transaction() as repos:
            repos.jobs.add(**new_job("kept"))
        migrate(engine)
        with store.transaction() as repos:
            assert repos.jobs.get("kept").name == "kept"
            assert repos.connections.list() == ([], 0)
    finally:
        engine.dispose()


def migrate_to(engine: Engine, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
