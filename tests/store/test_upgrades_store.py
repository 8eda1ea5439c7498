"""Upgrade rows in the store: added STOPPING and read back whole, listed newest first, moved
only from the status they were read in, one in progress per job (the database's own
constraint), unlinked from deleted applications and gone with their job. On SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, delete, insert

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.upgrades import UpgradeMode, UpgradeStatus
from streamjobs.store import Store
from streamjobs.store.tables import ApplicationRow
from streamjobs.store.upgrade_tables import UpgradeRow
from streamjobs.store.upgrades import UpgradeRecord
from tests.store.conftest import AddApplication, CountRows

pytestmark = pytest.mark.snapshots

OLD = {"spec": {"pipeline": {"steps": [{"sql": "SELECT 1"}]}}}
NEW = {"spec": {"pipeline": {"steps": [{"sql": "SELECT 2"}]}}}


def request(
    store: Store, clock: FakeClock, application_id: str, job: str = "orders", **fields: Any
) -> UpgradeRecord:
    values: dict[str, Any] = {
        "job_name": job,
        "mode": UpgradeMode.LAST_STATE,
        "from_application_id": application_id,
        "from_job_version": 1,
        "to_job_version": 2,
        "from_spec": OLD,
        "to_spec": NEW,
        "snapshot_name": "upgrade-20260101-000000",
        "requested_by": "alice",
        "requested_at": clock.now(),
    }
    with store.transaction() as repos:
        return repos.upgrades.add(**(values | fields))


def test_an_upgrade_is_stored_stopping_and_read_back_whole(
    store: Store, clock: FakeClock, add_application: AddApplication
) -> None:
    old = add_application("orders")
    upgrade = request(store, clock, old.id, mode=UpgradeMode.SNAPSHOT)
    assert upgrade.id.startswith("upg-")
    assert (upgrade.status, upgrade.mode) == (UpgradeStatus.STOPPING, UpgradeMode.SNAPSHOT)
    assert (upgrade.from_spec, upgrade.to_spec) == (OLD, NEW)
    assert upgrade.requested_at == clock.now()
    assert (upgrade.to_application_id, upgrade.finished_at, upgrade.reason) == (None, None, None)
    with store.reading() as repos:
        assert repos.upgrades.get(upgrade.id) == upgrade
        assert repos.upgrades.of_job("orders", upgrade.id) == upgrade
        assert repos.upgrades.active_for_job("orders") == upgrade
        assert repos.upgrades.active() == [upgrade]
        with pytest.raises(NotFound, match="other/"):
            repos.upgrades.of_job("other", upgrade.id)


def test_a_job_has_one_upgrade_in_progress_and_may_have_another_once_it_ended(
    store: Store, clock: FakeClock, add_application: AddApplication
) -> None:
    old = add_application("orders")
    first = request(store, clock, old.id)
    with pytest.raises(Conflict, match="has an upgrade in progress"):
        request(store, clock, old.id)
    request(store, clock, old.id, job="other")  # another job's is its own
    with store.transaction() as repos:
        ended = repos.upgrades.move(
            first.id,
            expected=UpgradeStatus.STOPPING,
            status=UpgradeStatus.FAILED,
            finished_at=clock.now(),
            reason="the old application failed",
        )
    assert ended is not None
    assert ended.status is UpgradeStatus.FAILED
    clock.advance(5)
    second = request(store, clock, old.id)
    with store.reading() as repos:
        assert [each.id for each in repos.upgrades.list("orders")] == [second.id, first.id]
        assert [each.job_name for each in repos.upgrades.active()] == ["other", "orders"]
        assert repos.upgrades.active_for_job("orders") == second


def test_the_database_keeps_a_job_to_one_upgrade_in_progress(
    store: Store, clock: FakeClock, add_application: AddApplication, engine: Engine
) -> None:
    old = add_application("orders")
    first = request(store, clock, old.id)
    row = {
        "id": "upg-sneaked-in",
        "job_name": "orders",
        "mode": "stateless",
        "status": "STOPPING",
        "active_key": "orders",
        "from_job_version": 1,
        "to_job_version": 2,
        "from_spec": {},
        "to_spec": {},
        "requested_by": "bob",
        "requested_at": clock.now(),
    }
    with pytest.raises(Exception, match=r"(?i)unique"), engine.begin() as connection:
        connection.execute(insert(UpgradeRow).values(row))
    with store.reading() as repos:
        assert repos.upgrades.active() == [first]


def test_a_move_lands_only_from_the_status_it_was_read_in(
    store: Store, clock: FakeClock, add_application: AddApplication
) -> None:
    old, new = add_application("orders"), add_application("other")
    upgrade = request(store, clock, old.id)
    until = clock.now() + timedelta(seconds=300)
    with store.transaction() as repos:
        started = repos.upgrades.move(
            upgrade.id,
            expected=UpgradeStatus.STOPPING,
            status=UpgradeStatus.WATCHING,
            to_application_id=new.id,
            watch_until=until,
        )
        again = repos.upgrades.move(
            upgrade.id, expected=UpgradeStatus.STOPPING, status=UpgradeStatus.FAILED
        )
        gone = repos.upgrades.move(
            "upg-none", expected=UpgradeStatus.STOPPING, status=UpgradeStatus.FAILED
        )
    assert started is not None
    assert (started.status, started.to_application_id, started.watch_until) == (
        UpgradeStatus.WATCHING,
        new.id,
        until,
    )
    assert (again, gone) == (None, None)
    with store.transaction() as repos, pytest.raises(TypeError, match="mode"):
        repos.upgrades.move(
            upgrade.id, expected=UpgradeStatus.WATCHING, status=UpgradeStatus.FAILED, mode="x"
        )


def test_a_deleted_application_leaves_its_upgrades_unlinked(
    store: Store, clock: FakeClock, add_application: AddApplication, engine: Engine
) -> None:
    old = add_application("orders")
    upgrade = request(store, clock, old.id)
    with engine.begin() as connection:
        connection.execute(delete(ApplicationRow).where(ApplicationRow.id == old.id))
    with store.reading() as repos:
        assert repos.upgrades.get(upgrade.id).from_application_id is None


def test_deleting_a_job_s_upgrades_leaves_the_others(
    store: Store, clock: FakeClock, add_application: AddApplication, count_rows: CountRows
) -> None:
    old = add_application("orders")
    request(store, clock, old.id)
    request(store, clock, old.id, job="other")
    with store.transaction() as repos:
        assert repos.upgrades.delete_of_job("orders") == 1
    assert count_rows(UpgradeRow) == 1


def test_a_rolled_back_transaction_leaves_no_upgrade(
    store: Store, clock: FakeClock, add_application: AddApplication, count_rows: CountRows
) -> None:
    old = add_application("orders")

    def requested_then_failed() -> None:
        with store.transaction() as repos:
            repos.upgrades.add(
                job_name="orders",
                mode=UpgradeMode.STATELESS,
                from_application_id=old.id,
                from_job_version=1,
                to_job_version=2,
                from_spec=OLD,
                to_spec=NEW,
                snapshot_name=None,
                requested_by="alice",
                requested_at=clock.now(),
            )
            raise RuntimeError("the request failed after")

    with pytest.raises(RuntimeError):
        requested_then_failed()
    assert count_rows(UpgradeRow) == 0
