"""The job use cases on each backend: audit in the same transaction, and racing edits."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.errors import Conflict, InvalidInput, NotFound
from streamjobs.services.container import Services
from tests.factories import console_manifest, pipeline_manifest

ANA = Actor(Principal("ana", is_admin=True), source="10.0.0.7")
"""An admin: these tests are about the use cases, not about who may take them."""
STRANGER = Actor(Principal("sam"), source="10.0.0.8")
"""A user granted nothing."""


def audit_actions(services: Services) -> list[tuple[str, str, str | None]]:
    with services.store.transaction() as repos:
        entries = repos.audit.list(limit=100)
    return [(entry.action, entry.actor, entry.source) for entry in reversed(entries)]


def test_every_change_is_audited_with_who_and_from_where(services: Services) -> None:
    manifest = console_manifest("audited")
    services.jobs.create(manifest, actor=ANA)
    manifest["metadata"]["description"] = "edited"
    services.jobs.apply("audited", manifest, actor=ANA)
    services.jobs.apply("audited", manifest, actor=ANA)
    services.jobs.duplicate("audited", new_name="audited-copy", actor=ANA)
    services.jobs.delete("audited", actor=ANA)
    assert audit_actions(services) == [
        ("job.created", "ana", "10.0.0.7"),
        ("job.configured", "ana", "10.0.0.7"),
        ("job.created", "ana", "10.0.0.7"),
        ("job.deleted", "ana", "10.0.0.7"),
    ]


def test_a_refused_manifest_leaves_no_trace(services: Services) -> None:
    with pytest.raises(InvalidInput):
        services.jobs.create(pipeline_manifest("refused", bundle="nobody"), actor=ANA)
    assert not services.jobs.exists("refused")
    assert audit_actions(services) == []


def test_two_racing_applies_from_one_version_one_wins(services: Services) -> None:
    services.jobs.create(pipeline_manifest("raced"), actor=ANA)
    barrier = threading.Barrier(2)
    outcomes: dict[str, Any] = {}

    def edit(description: str) -> None:
        manifest = pipeline_manifest("raced")
        manifest["metadata"].update(description=description, resourceVersion="1")
        barrier.wait()
        try:
            services.jobs.apply("raced", manifest, actor=ANA)
            outcomes[description] = "applied"
        except Conflict as conflict:
            outcomes[description] = conflict

    threads = [threading.Thread(target=edit, args=(text,)) for text in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [text for text, outcome in outcomes.items() if outcome == "applied"]
    assert len(winners) == 1
    assert sum(isinstance(outcome, Conflict) for outcome in outcomes.values()) == 1
    stored = services.jobs.get("raced", actor=ANA)
    assert stored.version == 2
    assert stored.manifest["metadata"]["description"] == winners[0]


def test_unchanged_by_finds_only_the_same_manifest_and_refuses_like_apply(
    services: Services,
) -> None:
    manifest = pipeline_manifest("steady")
    assert services.jobs.unchanged_by("steady", manifest, actor=ANA) is None
    created = services.jobs.create(manifest, actor=ANA)
    assert services.jobs.unchanged_by("steady", manifest, actor=ANA) == created
    edited = pipeline_manifest("steady")
    edited["metadata"]["description"] = "edited"
    assert services.jobs.unchanged_by("steady", edited, actor=ANA) is None
    with pytest.raises(InvalidInput, match="cannot change"):
        services.jobs.unchanged_by("other", manifest, actor=ANA)
    with pytest.raises(NotFound, match="steady"):
        services.jobs.unchanged_by("steady", manifest, actor=STRANGER)
    assert audit_actions(services) == [("job.created", "ana", "10.0.0.7")]
