"""Snapshot rows in the store: added, read newest first, changed only as the service changes
them, one name per job, gone with their job's deletion and unlinked from a deleted application;
and the job version an application's spec came from. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, delete

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.snapshots import OutputPosition, SnapshotKind, SnapshotStatus
from streamjobs.store import Store
from streamjobs.store.snapshot_tables import SnapshotRow
from streamjobs.store.snapshots import SnapshotRecord
from streamjobs.store.tables import ApplicationRow
from tests.store.conftest import AddApplication, AddJob, CountRows

pytestmark = pytest.mark.snapshots

POSITIONS = [
    OutputPosition(output="sums", format="delta", version=4, txn_app_id="q-1", txn_version=9),
    OutputPosition(output="out", format="kafka", tracked=False),
]


def add(store: Store, clock: FakeClock, job: str, name: str, **fields: object) -> SnapshotRecord:
    values: dict[str, Any] = {
        "job_name": job,
        "name": name,
        "kind": SnapshotKind.MANUAL,
        "status": SnapshotStatus.TAKING,
        "requested_at": clock.now(),
        "requested_by": "alice",
    }
    with store.transaction() as repos:
        return repos.snapshots.add(**(values | fields))


def test_a_snapshot_is_stored_and_read_back_whole(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    add_job("orders")
    application = add_application("orders", job_version=3)
    assert application.job_version == 3
    taken = add(
        store,
        clock,
        "orders",
        "before-upgrade",
        status=SnapshotStatus.READY,
        application_id=application.id,
        spec_version=3,
        batches={"sums": 9, "out": 9},
        positions=POSITIONS,
        taken_at=clock.now(),
        size_bytes=2**40,
        directory="d-1",
    )
    with store.reading() as repos:
        read = repos.snapshots.get("orders", "before-upgrade")
    assert read == taken
    assert (read.kind, read.status, read.application_id) == (
        SnapshotKind.MANUAL,
        SnapshotStatus.READY,
        application.id,
    )
    assert (read.batches, read.positions, read.size_bytes) == (
        {"sums": 9, "out": 9},
        POSITIONS,
        2**40,
    )
    assert (read.requested_at, read.taken_at, read.requested_by) == (
        clock.now(),
        clock.now(),
        "alice",
    )


def test_names_are_unique_per_job_only(store: Store, clock: FakeClock, add_job: AddJob) -> None:
    add_job("orders")
    add_job("clicks")
    add(store, clock, "orders", "nightly")
    add(store, clock, "clicks", "nightly")
    with pytest.raises(AlreadyExists, match="snapshot 'nightly' already exists"):
        add(store, clock, "orders", "nightly")
    with store.reading() as repos:
        assert [
            s.job_name for s in (repos.snapshots.get(j, "nightly") for j in ("orders", "clicks"))
        ] == [
            "orders",
            "clicks",
        ]
        with pytest.raises(NotFound, match="snapshot 'orders/weekly' does not exist"):
            repos.snapshots.get("orders", "weekly")


def test_lists_are_newest_first_and_filter_by_status_and_kind(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    add_job("orders")
    for name, kind, status in (
        ("a", SnapshotKind.PERIODIC, SnapshotStatus.READY),
        ("b", SnapshotKind.MANUAL, SnapshotStatus.FAILED),
        ("c", SnapshotKind.STOP, SnapshotStatus.READY),
        ("d", SnapshotKind.MANUAL, SnapshotStatus.TAKING),
    ):
        clock.advance(60)
        add(store, clock, "orders", name, kind=kind, status=status)
    with store.reading() as repos:
        assert [s.name for s in repos.snapshots.list("orders")] == ["d", "c", "b", "a"]
        ready = repos.snapshots.list("orders", statuses=[SnapshotStatus.READY])
        assert [s.name for s in ready] == ["c", "a"]
        manual = repos.snapshots.list("orders", kinds=[SnapshotKind.MANUAL])
        assert [s.name for s in manual] == ["d", "b"]
        assert [s.name for s in repos.snapshots.taking()] == ["d"]
        assert repos.snapshots.list("clicks") == []


def test_only_a_taking_snapshot_is_finished_and_only_once(
    store: Store, clock: FakeClock, add_job: AddJob
) -> None:
    add_job("orders")
    asked = add(store, clock, "orders", "m1")
    with store.transaction() as repos:
        ready = repos.snapshots.finish_taking(
            asked.id,
            status=SnapshotStatus.READY,
            batches={"sums": 2},
            positions=POSITIONS[:1],
            size_bytes=10,
            directory=asked.id,
            taken_at=clock.now(),
        )
        assert ready is not None
        assert (ready.status, ready.batches, ready.positions) == (
            SnapshotStatus.READY,
            {"sums": 2},
            POSITIONS[:1],
        )
        again = repos.snapshots.finish_taking(asked.id, status=SnapshotStatus.FAILED, error="x")
        assert again is None
        assert repos.snapshots.by_id(asked.id).status is SnapshotStatus.READY
        with pytest.raises(TypeError, match="a snapshot's job_name, name cannot be changed"):
            repos.snapshots.update(asked.id, name="other", job_name="other")
        with pytest.raises(NotFound):
            repos.snapshots.update("no-such-id", error="x")


def test_a_deleted_application_leaves_its_snapshots_unlinked(
    store: Store,
    engine: Engine,
    clock: FakeClock,
    add_job: AddJob,
    add_application: AddApplication,
) -> None:
    add_job("orders")
    application = add_application("orders")
    kept = add(store, clock, "orders", "m1", application_id=application.id)
    with engine.begin() as connection:
        connection.execute(delete(ApplicationRow).where(ApplicationRow.id == application.id))
    with store.reading() as repos:
        assert repos.snapshots.by_id(kept.id).application_id is None


def test_deleting_a_job_s_snapshots_returns_them_for_their_directories(
    store: Store, clock: FakeClock, add_job: AddJob, count_rows: CountRows
) -> None:
    add_job("orders")
    add_job("clicks")
    add(store, clock, "orders", "a", directory="dir-a")
    add(store, clock, "orders", "b")
    add(store, clock, "clicks", "a", directory="dir-c")
    with store.transaction() as repos:
        deleted = repos.snapshots.delete_of_job("orders")
        assert sorted((s.name, s.directory) for s in deleted) == [("a", "dir-a"), ("b", None)]
        assert repos.snapshots.delete(deleted[0].id) is False
    assert count_rows(SnapshotRow) == 1


def test_a_rolled_back_transaction_leaves_no_snapshot(
    store: Store, clock: FakeClock, add_job: AddJob, count_rows: CountRows
) -> None:
    add_job("orders")

    class Abandon(Exception):
        pass

    try:
        with store.transaction() as repos:
            repos.snapshots.add(
                job_name="orders",
                name="m",
                kind=SnapshotKind.MANUAL,
                status=SnapshotStatus.TAKING,
                requested_at=clock.now(),
            )
            raise Abandon
    except Abandon:
        pass
    assert count_rows(SnapshotRow) == 0


def test_an_application_s_job_version_is_kept_and_changes_on_resume(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    add_job("orders")
    add_job("clicks")
    unversioned = add_application("clicks")
    assert unversioned.job_version is None
    application = add_application("orders", job_version=1)
    with store.transaction() as repos:
        changed = repos.applications.update(
            application.id, version=application.version, at=clock.now(), job_version=2
        )
    assert changed.job_version == 2
    with store.reading() as repos:
        assert repos.applications.get(application.id).job_version == 2
        listed, _ = repos.applications.list(job_name="orders")
        assert [each.job_version for each in listed] == [2]
