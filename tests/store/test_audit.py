"""The audit log: entries come back newest first, as they were appended."""

from __future__ import annotations

from streamjobs.domain.clock import FakeClock
from streamjobs.store import AuditEntry, Store


def append(store: Store, clock: FakeClock, action: str, **detail: object) -> AuditEntry:
    clock.advance(1)
    with store.transaction() as repos:
        return repos.audit.append(
            at=clock.now(),
            actor="alice",
            action=action,
            resource_kind="job",
            resource_name="orders",
            detail=detail,
            source="cli",
        )


def test_an_entry_reads_back_as_appended(store: Store, clock: FakeClock) -> None:
    entry = append(store, clock, "job.configured", version=2, changes={"spec": ["bundle"]})
    with store.transaction() as repos:
        assert repos.audit.list() == [entry]
    assert (entry.actor, entry.action, entry.at, entry.source) == (
        "alice",
        "job.configured",
        clock.now(),
        "cli",
    )
    assert (entry.resource_kind, entry.resource_name) == ("job", "orders")
    assert entry.detail == {"version": 2, "changes": {"spec": ["bundle"]}}


def test_entries_are_listed_newest_first_in_pages(store: Store, clock: FakeClock) -> None:
    for action in ("created", "configured", "started", "stopped", "deleted"):
        append(store, clock, f"job.{action}")
    with store.transaction() as repos:
        newest_first = [entry.action for entry in repos.audit.list()]
        page = [entry.action for entry in repos.audit.list(limit=2, offset=1)]
    assert newest_first == [
        "job.deleted",
        "job.stopped",
        "job.started",
        "job.configured",
        "job.created",
    ]
    assert page == ["job.stopped", "job.started"]
