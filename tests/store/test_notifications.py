"""Notification destinations and the outbox in the store: adding, versioned changes, health,
and an outbox row's way from pending to delivered or failed, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound
from streamjobs.store import Store
from streamjobs.store.destinations import DestinationRecord
from streamjobs.store.notifications import DeliveryState, OutboxRecord


def add_destination(
    store: Store, clock: FakeClock, name: str, **overrides: Any
) -> DestinationRecord:
    fields: dict[str, Any] = {
        "name": name,
        "kind": "webhook",
        "bundle": "default",
        "description": None,
        "manifest": {"metadata": {"name": name}, "spec": {"type": "webhook"}},
        "config": {"url": "https://hooks.example/x", "signingSecret": "hook-key"},
        "secret_names": ("hook-key", "hook-key"),
        "actor": "alice",
        "at": clock.now(),
    }
    with store.transaction() as repos:
        return repos.destinations.add(**(fields | overrides))


def queue(store: Store, clock: FakeClock, destination: str, job: str = "orders") -> OutboxRecord:
    with store.transaction() as repos:
        return repos.notifications.add(
            destination=destination,
            job_name=job,
            application_id=None,
            event="failed",
            notice={"event": "failed", "job": job},
            at=clock.now(),
        )


def test_a_destination_reads_back_whole_healthy_at_version_1(
    store: Store, clock: FakeClock
) -> None:
    added = add_destination(store, clock, "ops-hook")
    with store.reading() as repos:
        found = repos.destinations.get("ops-hook")
    assert found == added
    assert (found.kind, found.version, found.healthy) == ("webhook", 1, True)
    assert found.secret_names == ("hook-key",)
    assert found.config["url"] == "https://hooks.example/x"
    assert found.created_at == clock.now()


def test_a_taken_name_is_refused_and_a_missing_one_is_not_found(
    store: Store, clock: FakeClock
) -> None:
    add_destination(store, clock, "ops-hook")
    with pytest.raises(AlreadyExists), store.transaction() as repos:
        repos.destinations.add(
            name="ops-hook",
            kind="slack",
            bundle="default",
            description=None,
            manifest={},
            config={},
            secret_names=(),
            actor="bob",
            at=clock.now(),
        )
    with pytest.raises(NotFound), store.reading() as repos:
        repos.destinations.get("nowhere")


def test_an_update_bumps_the_version_and_a_stale_one_is_a_conflict(
    store: Store, clock: FakeClock
) -> None:
    add_destination(store, clock, "ops-hook")
    clock.advance(5)
    change: dict[str, Any] = {
        "kind": "slack",
        "bundle": "default",
        "description": "the channel",
        "manifest": {"spec": {"type": "slack"}},
        "config": {"urlSecret": "slack-url"},
        "secret_names": ("slack-url",),
        "actor": "bob",
        "at": clock.now(),
    }
    with store.transaction() as repos:
        updated = repos.destinations.update("ops-hook", expected_version=1, **change)
    assert (updated.version, updated.kind, updated.secret_names) == (2, "slack", ("slack-url",))
    assert (updated.updated_by, updated.created_by) == ("bob", "alice")
    with pytest.raises(Conflict), store.transaction() as repos:
        repos.destinations.update("ops-hook", expected_version=1, **change)
    with pytest.raises(NotFound), store.transaction() as repos:
        repos.destinations.update("gone", expected_version=1, **change)


def test_list_filters_by_bundle_and_kind_and_delete_checks_the_version(
    store: Store, clock: FakeClock
) -> None:
    add_destination(store, clock, "b-hook")
    add_destination(store, clock, "a-mail", kind="email")
    with store.reading() as repos:
        assert [d.name for d in repos.destinations.list()] == ["a-mail", "b-hook"]
        assert [d.name for d in repos.destinations.list(kind="email")] == ["a-mail"]
        assert repos.destinations.list(bundle="other") == []
        assert repos.destinations.existing(["a-mail", "zzz"]) == {"a-mail"}
    with pytest.raises(Conflict), store.transaction() as repos:
        repos.destinations.delete("a-mail", expected_version=7)
    with store.transaction() as repos:
        repos.destinations.delete("a-mail", expected_version=1)
        assert repos.destinations.find("a-mail") is None


def test_failures_in_a_row_make_a_destination_unhealthy_and_one_success_heals_it(
    store: Store, clock: FakeClock
) -> None:
    add_destination(store, clock, "ops-hook")
    outcomes = []
    with store.transaction() as repos:
        for _ in range(3):
            outcomes.append(
                repos.destinations.record_outcome("ops-hook", delivered=False, unhealthy_after=3)
            )
        assert repos.destinations.unhealthy_count() == 1
        healed = repos.destinations.record_outcome("ops-hook", delivered=True, unhealthy_after=3)
    assert [(o.healthy, o.consecutive_failures, o.changed) for o in outcomes] == [
        (True, 1, False),
        (True, 2, False),
        (False, 3, True),
    ]
    assert (healed.healthy, healed.consecutive_failures, healed.changed) == (True, 0, True)
    with store.reading() as repos:
        assert repos.destinations.get("ops-hook").version == 1


def test_a_queued_notice_is_due_at_once_and_claimed_by_one_worker_only(
    store: Store, clock: FakeClock
) -> None:
    first = queue(store, clock, "ops-hook")
    clock.advance(1)
    second = queue(store, clock, "ops-hook")
    assert (first.state, first.attempts) == (DeliveryState.PENDING, 0)
    with store.transaction() as repos:
        assert [row.id for row in repos.notifications.due(clock.now(), 10)] == [first.id, second.id]
        assert [row.id for row in repos.notifications.due(clock.now(), 1)] == [first.id]
        lease = clock.now() + timedelta(seconds=30)
        assert repos.notifications.claim(first.id, now=clock.now(), until=lease)
        assert not repos.notifications.claim(first.id, now=clock.now(), until=lease)
        assert [row.id for row in repos.notifications.due(clock.now(), 10)] == [second.id]
        assert repos.notifications.depth() == 2


def test_a_lease_that_ends_makes_the_notice_due_again(store: Store, clock: FakeClock) -> None:
    queued = queue(store, clock, "ops-hook")
    with store.transaction() as repos:
        repos.notifications.claim(
            queued.id, now=clock.now(), until=clock.now() + timedelta(seconds=30)
        )
    clock.advance(31)
    with store.reading() as repos:
        assert [row.id for row in repos.notifications.due(clock.now(), 10)] == [queued.id]


def test_delivered_and_failed_rows_leave_the_queue_and_count_their_failures(
    store: Store, clock: FakeClock
) -> None:
    retried = queue(store, clock, "ops-hook")
    given_up = queue(store, clock, "ops-hook")
    retry_at = clock.now() + timedelta(seconds=60)
    with store.transaction() as repos:
        pending = repos.notifications.mark_failed(
            retried.id, error="HTTP 503", retry_at=retry_at, response_status=503
        )
        failed = repos.notifications.mark_failed(given_up.id, error="refused", retry_at=None)
    assert (pending.state, pending.attempts, pending.next_attempt_at) == (
        DeliveryState.PENDING,
        1,
        retry_at,
    )
    assert (pending.last_error, pending.response_status) == ("HTTP 503", 503)
    assert (failed.state, failed.next_attempt_at) == (DeliveryState.FAILED, None)
    with store.transaction() as repos:
        assert repos.notifications.due(clock.now(), 10) == []
        assert repos.notifications.due(retry_at, 10)[0].id == retried.id
        delivered = repos.notifications.mark_delivered(retried.id, at=retry_at, response_status=204)
        assert repos.notifications.depth() == 0
        assert repos.notifications.failures_total() == 2
    assert (delivered.state, delivered.attempts, delivered.delivered_at) == (
        DeliveryState.DELIVERED,
        2,
        retry_at,
    )
    with pytest.raises(NotFound), store.transaction() as repos:
        repos.notifications.mark_delivered(10_000, at=clock.now())


def test_a_destination_lists_its_rows_newest_first_and_forgets_them_when_deleted(
    store: Store, clock: FakeClock
) -> None:
    older = queue(store, clock, "ops-hook", job="a")
    newer = queue(store, clock, "ops-hook", job="b")
    queue(store, clock, "mail", job="c")
    with store.transaction() as repos:
        listed = repos.notifications.for_destination("ops-hook", 10)
        assert [row.id for row in listed] == [newer.id, older.id]
        assert [row.id for row in repos.notifications.for_destination("ops-hook", 1)] == [newer.id]
        assert listed[0].notice == {"event": "failed", "job": "b"}
        assert repos.notifications.delete_for_destination("ops-hook") == 2
        assert repos.notifications.for_destination("ops-hook", 10) == []
        assert repos.notifications.depth() == 1
