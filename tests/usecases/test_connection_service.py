"""The connection use cases on each backend: apply outcomes, audit entries, and jobs and
connections kept consistent (a used connection cannot go, a job cannot name a missing one)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import streamjobs.services.connections as connection_service
import streamjobs.services.job_references as job_references
from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.errors import Conflict, InvalidInput, NotFound
from streamjobs.services.connections import ConnectionQuery
from streamjobs.services.container import Services
from tests.factories import connection_manifest, dataset_job_manifest

ANA = Actor(Principal("ana", is_admin=True), source="10.0.0.7")
"""An admin: these tests are about the use cases, not about who may take them."""


def audit_trail(services: Services) -> list[tuple[str, str, str]]:
    with services.store.transaction() as repos:
        entries = repos.audit.list(limit=100)
    return [(entry.action, entry.resource_kind, entry.resource_name) for entry in reversed(entries)]


def test_apply_creates_then_leaves_alone_then_configures_and_audits(services: Services) -> None:
    manifest = connection_manifest("kafka-main")
    record, outcome = services.connections.apply("kafka-main", manifest, actor=ANA)
    assert (outcome, record.version, record.type) == ("created", 1, "kafka")
    record, outcome = services.connections.apply("kafka-main", manifest, actor=ANA)
    assert (outcome, record.version) == ("unchanged", 1)
    manifest["spec"]["bootstrapServers"] = "kafka-1:9092,kafka-2:9092"
    record, outcome = services.connections.apply("kafka-main", manifest, actor=ANA)
    assert (outcome, record.version) == ("configured", 2)
    assert record.manifest["spec"]["bootstrapServers"] == "kafka-1:9092,kafka-2:9092"
    services.connections.delete("kafka-main", actor=ANA)
    assert audit_trail(services) == [
        ("connection.created", "connection", "kafka-main"),
        ("connection.configured", "connection", "kafka-main"),
        ("connection.deleted", "connection", "kafka-main"),
    ]
    with services.store.transaction() as repos:
        entry = repos.audit.list(limit=1)[0]
    assert (entry.actor, entry.source, entry.detail) == (
        "ana",
        "10.0.0.7",
        {
            "version": 2,
            "type": "kafka",
        },
    )


def test_apply_cannot_rename_and_honours_the_printed_version(services: Services) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    with pytest.raises(InvalidInput) as renamed:
        services.connections.apply("kafka-main", connection_manifest("kafka-other"), actor=ANA)
    assert [error.path for error in renamed.value.errors] == ["metadata.name"]
    stale = connection_manifest("kafka-main", options={"a": "1"})
    stale["metadata"]["resourceVersion"] = "1"
    services.connections.apply("kafka-main", stale, actor=ANA)
    stale["spec"]["options"] = {"a": "2"}
    with pytest.raises(Conflict, match="based on version 1"):
        services.connections.apply("kafka-main", stale, actor=ANA)


def test_a_job_naming_a_missing_connection_is_refused_at_the_dataset(services: Services) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    manifest = dataset_job_manifest("orders", reads="kafka-main:orders", writes="lake:raw")
    with pytest.raises(InvalidInput) as refused:
        services.jobs.create(manifest, actor=ANA)
    assert [str(error) for error in refused.value.errors] == [
        "spec.pipeline.outputs[0].dataset: connection 'lake' does not exist (known: kafka-main)"
    ]
    assert not services.jobs.exists("orders")
    assert audit_trail(services) == [("connection.created", "connection", "kafka-main")]


def test_a_job_whose_format_does_not_fit_the_connection_is_refused(services: Services) -> None:
    services.connections.create(connection_manifest("landing", "files"), actor=ANA)
    manifest = dataset_job_manifest("orders", reads="landing:orders")
    with pytest.raises(InvalidInput) as refused:
        services.jobs.apply("orders", manifest, actor=ANA)
    assert [error.path for error in refused.value.errors] == ["spec.pipeline.inputs[0].dataset"]
    assert "format kafkajson needs a kafka connection" in refused.value.detail
    assert not services.jobs.exists("orders")


def test_a_used_connection_cannot_be_deleted_and_names_its_jobs(services: Services) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    services.connections.create(connection_manifest("landing", "files"), actor=ANA)
    for name in ("orders", "refunds"):
        manifest = dataset_job_manifest(name, reads=f"kafka-main:{name}", writes=f"landing:{name}")
        services.jobs.create(manifest, actor=ANA)
    with pytest.raises(Conflict) as refused:
        services.connections.delete("kafka-main", actor=ANA)
    assert refused.value.detail == (
        "connection 'kafka-main' is used by the datasets of jobs 'orders', 'refunds'; point them "
        "at another connection or delete them first"
    )
    assert services.connections.exists("kafka-main")
    services.jobs.delete("orders", actor=ANA)
    services.jobs.delete("refunds", actor=ANA)
    services.connections.delete("kafka-main", actor=ANA)
    with pytest.raises(NotFound, match="connection 'kafka-main' does not exist"):
        services.connections.get("kafka-main")


def test_a_connection_cannot_change_to_a_type_its_jobs_do_not_fit(services: Services) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    services.connections.create(connection_manifest("landing", "files"), actor=ANA)
    job = dataset_job_manifest("orders", reads="kafka-main:orders", writes="landing:out")
    services.jobs.create(job, actor=ANA)
    with pytest.raises(Conflict) as refused:
        services.connections.apply(
            "kafka-main", connection_manifest("kafka-main", "files"), actor=ANA
        )
    assert refused.value.detail == (
        "connection 'kafka-main' cannot become a files connection while jobs use it as a kafka "
        "one: job 'orders' spec.pipeline.inputs[0].dataset: format kafkajson needs a kafka "
        "connection, but 'kafka-main' is a files connection"
    )
    assert services.connections.get("kafka-main").type == "kafka"
    # parquet fits files and lakehouse alike, so the landing area may become a lakehouse
    _, outcome = services.connections.apply(
        "landing", connection_manifest("landing", "lakehouse"), actor=ANA
    )
    assert outcome == "configured"


def test_list_filters_by_type_and_checks_its_parameters(services: Services) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    services.connections.create(connection_manifest("lake", "lakehouse"), actor=ANA)
    page = services.connections.list(ConnectionQuery(type="lakehouse"))
    assert ([record.name for record in page.items], page.total) == (["lake"], 1)
    with pytest.raises(InvalidInput) as refused:
        services.connections.list(ConnectionQuery(type="s3", limit=0))
    assert [error.path for error in refused.value.errors] == ["query.limit"]
    with pytest.raises(InvalidInput, match=r"query\.type: must be one of: kafka, lakehouse"):
        services.connections.list(ConnectionQuery(type="s3"))


@pytest.mark.parametrize("first", ["connection deleted", "job checked"])
def test_a_job_and_the_deletion_of_its_connection_racing_cannot_both_land(
    services: Services, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    services.connections.create(connection_manifest("kafka-main"), actor=ANA)
    services.connections.create(connection_manifest("landing", "files"), actor=ANA)
    went_first = threading.Event()

    def pausing(real: Callable[..., Any]) -> Callable[..., Any]:
        """``real``, then a pause before the transaction goes on to commit, in which the other
        thread is told to go: the moment a lost update would slip in."""

        def paused(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            went_first.set()
            time.sleep(0.5)
            return result

        return paused

    if first == "connection deleted":  # paused once it found no job using the connection
        module, step = connection_service, "jobs_using"
    else:  # paused once the job is written and found its connections there
        module, step = job_references, "stored_connections"
    monkeypatch.setattr(module, step, pausing(getattr(module, step)))
    outcomes: dict[str, object] = {}

    def delete_connection() -> None:
        if first != "connection deleted":
            went_first.wait(10)
        try:
            services.connections.delete("kafka-main", actor=ANA)
            outcomes["delete"] = "done"
        except Conflict as conflict:
            outcomes["delete"] = conflict

    def create_job() -> None:
        if first != "job checked":
            went_first.wait(10)
        manifest = dataset_job_manifest("orders", reads="kafka-main:orders", writes="landing:out")
        try:
            services.jobs.create(manifest, actor=ANA)
            outcomes["create"] = "done"
        except InvalidInput as refused:
            outcomes["create"] = refused

    threads = [threading.Thread(target=delete_connection), threading.Thread(target=create_job)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcome == "done" for outcome in outcomes.values()) == [False, True], outcomes
    assert services.jobs.exists("orders") == services.connections.exists("kafka-main")
