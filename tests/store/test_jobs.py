"""Jobs in the store: adding, reading, listing with filters, versioned updates, deleting."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, update

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound
from streamjobs.store import JobFilters, JobRepository, Store
from streamjobs.store.tables import JobRow, JobTagRow
from tests.store.conftest import AddJob, CountRows, NewJob


def test_an_added_job_reads_back_whole_at_version_1(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    manifest = {"metadata": {"name": "orders"}, "spec": {"pipeline": {"inputs": [{"n": 1}]}}}
    added = add_job("orders", manifest=manifest, tags={"team": "payments"}, namespace="sales")
    with store.transaction() as repos:
        job = repos.jobs.get("orders")
    assert job == added
    assert (job.name, job.namespace, job.bundle, job.description) == (
        "orders",
        "sales",
        "default",
        "the orders job",
    )
    assert job.manifest == manifest
    assert job.tags == {"team": "payments"}
    assert (job.desired_state, job.status, job.version) == ("STOPPED", "Idle", 1)
    assert (job.created_by, job.created_at) == ("alice", clock.now())
    assert (job.updated_by, job.updated_at) == ("alice", clock.now())


def test_a_missing_job_is_none_for_find_and_not_found_for_get_and_show(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.jobs.find("ghost") is None
        with pytest.raises(NotFound, match="job 'ghost' does not exist"):
            repos.jobs.get("ghost")
        with pytest.raises(NotFound, match="job 'ghost' does not exist"):
            repos.jobs.show("ghost")


def test_a_second_job_with_a_taken_name_is_refused(store: Store, add_job: AddJob) -> None:
    first = add_job("orders")
    with pytest.raises(AlreadyExists, match="job 'orders' already exists"):
        add_job("orders", description="another")
    with store.transaction() as repos:
        assert repos.jobs.get("orders") == first


def test_losing_the_race_for_a_name_is_already_exists_too(
    store: Store, add_job: AddJob, new_job: NewJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_job("orders")
    # as if another transaction committed "orders" between our look-up and our insert
    monkeypatch.setattr(JobRepository, "find", lambda self, name: None)
    with pytest.raises(AlreadyExists, match="job 'orders'"), store.transaction() as repos:
        repos.jobs.add(**new_job("orders"))


@pytest.fixture
def catalogue(add_job: AddJob, engine: Engine) -> None:
    """Five jobs to list: names in mixed case, two bundles, tags, and one running."""
    add_job("alpha", tags={"team": "payments", "tier": "gold"})
    add_job("beta", bundle="analytics", tags={"team": "search"})
    add_job("Gamma-Alpha", tags={"tier": "silver"})
    add_job("delta_1", bundle="analytics")
    add_job("epsilon", tags={"team": "payments"})
    with engine.begin() as connection:
        connection.execute(update(JobRow).where(JobRow.name == "beta").values(status="Running"))


def listed(store: Store, limit: int = 50, offset: int = 0, **filters: Any) -> tuple[list[str], int]:
    """The names of the jobs ``JobRepository.list`` returns for ``filters``, and the total."""
    with store.transaction() as repos:
        jobs, total = repos.jobs.list(JobFilters(**filters), limit=limit, offset=offset)
    return [job.name for job in jobs], total


@pytest.mark.usefixtures("catalogue")
@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ({}, ["Gamma-Alpha", "alpha", "beta", "delta_1", "epsilon"]),
        ({"status": "Running"}, ["beta"]),
        ({"status": "Idle"}, ["Gamma-Alpha", "alpha", "delta_1", "epsilon"]),
        ({"bundle": "analytics"}, ["beta", "delta_1"]),
        ({"tag": ("team", None)}, ["alpha", "beta", "epsilon"]),
        ({"tag": ("team", "payments")}, ["alpha", "epsilon"]),
        ({"tag": ("tier", "gold")}, ["alpha"]),
        ({"tag": ("owner", None)}, []),
        ({"search": "ALPHA"}, ["Gamma-Alpha", "alpha"]),
        ({"search": "_"}, ["delta_1"]),
        ({"search": "%"}, []),
        ({"search": "/"}, []),
        ({"bundles": ["analytics"]}, ["beta", "delta_1"]),
        ({"bundles": []}, []),
        ({"bundles": ["analytics", "default"], "search": "a_"}, ["delta_1"]),
        ({"search": "a%1"}, []),
        ({"search": "alpha", "tag": ("tier", None), "status": "Idle"}, ["Gamma-Alpha", "alpha"]),
        ({"bundle": "analytics", "tag": ("team", "search")}, ["beta"]),
    ],
)
def test_list_filters_by_status_tag_bundle_and_name(
    store: Store, filters: dict[str, Any], names: list[str]
) -> None:
    assert listed(store, **filters) == (names, len(names))


@pytest.mark.usefixtures("catalogue")
def test_list_pages_by_name_and_counts_all_that_match(store: Store) -> None:
    assert listed(store, limit=2) == (["Gamma-Alpha", "alpha"], 5)
    assert listed(store, limit=2, offset=2) == (["beta", "delta_1"], 5)
    assert listed(store, limit=2, offset=4) == (["epsilon"], 5)
    assert listed(store, limit=2, offset=10) == ([], 5)
    assert listed(store, tag=("team", None), limit=1, offset=1) == (["beta"], 3)


@pytest.mark.usefixtures("catalogue")
def test_listed_jobs_carry_their_tags(store: Store) -> None:
    with store.transaction() as repos:
        jobs, _ = repos.jobs.list()
    assert {job.name: job.tags for job in jobs}["alpha"] == {"team": "payments", "tier": "gold"}
    assert list({job.name: job.tags for job in jobs}["alpha"]) == ["team", "tier"]
    assert {job.name: job.tags for job in jobs}["delta_1"] == {}


def test_update_replaces_manifest_description_bundle_and_tags_and_bumps_the_version(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    created = add_job("orders", tags={"team": "payments", "tier": "gold"})
    clock.advance(60)
    with store.transaction() as repos:
        updated = repos.jobs.update(
            "orders",
            expected_version=1,
            manifest={"metadata": {"name": "orders"}, "spec": {"bundle": "analytics"}},
            description="now in analytics",
            bundle="analytics",
            tags={"team": "search", "owner": "bob"},
            actor="bob",
            at=clock.now(),
        )
    with store.transaction() as repos:
        assert repos.jobs.get("orders") == updated
        assert repos.jobs.list(JobFilters(tag=("tier", None))) == ([], 0)
    assert updated.version == 2
    assert updated.manifest == {"metadata": {"name": "orders"}, "spec": {"bundle": "analytics"}}
    assert (updated.description, updated.bundle) == ("now in analytics", "analytics")
    assert updated.tags == {"owner": "bob", "team": "search"}
    assert (updated.updated_by, updated.updated_at) == (
        "bob",
        created.created_at + timedelta(seconds=60),
    )
    assert (updated.created_by, updated.created_at) == (created.created_by, created.created_at)
    assert updated.id == created.id


def change_description(store: Store, name: str, *, based_on: int, to: str, at: FakeClock) -> None:
    with store.transaction() as repos:
        job = repos.jobs.get(name)
        repos.jobs.update(
            name,
            expected_version=based_on,
            manifest=job.manifest,
            description=to,
            bundle=job.bundle,
            tags={"changed": "yes"},
            actor="bob",
            at=at.now(),
        )


def test_an_update_based_on_an_old_version_is_a_conflict_and_changes_nothing(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    add_job("orders")
    change_description(store, "orders", based_on=1, to="second", at=clock)
    with store.transaction() as repos:
        before = repos.jobs.get("orders")
    with pytest.raises(Conflict) as conflict:
        change_description(store, "orders", based_on=1, to="stale", at=clock)
    assert "job 'orders'" in conflict.value.detail
    assert "version 1" in conflict.value.detail
    assert "version 2" in conflict.value.detail
    with store.transaction() as repos:
        assert repos.jobs.get("orders") == before


def test_updating_a_missing_job_is_not_found(store: Store, clock: FakeClock) -> None:
    with pytest.raises(NotFound, match="job 'ghost'"):
        change_description(store, "ghost", based_on=1, to="x", at=clock)


def test_delete_removes_the_job_and_its_tags(
    store: Store, add_job: AddJob, count_rows: CountRows
) -> None:
    add_job("orders", tags={"team": "payments", "tier": "gold"})
    add_job("kept", tags={"team": "search"})
    with store.transaction() as repos:
        repos.jobs.delete("orders")
    with store.transaction() as repos:
        assert repos.jobs.find("orders") is None
        assert [job.name for job in repos.jobs.list()[0]] == ["kept"]
    assert count_rows(JobTagRow) == 1


def test_delete_with_an_old_version_is_a_conflict_and_keeps_the_job(
    store: Store, add_job: AddJob, clock: FakeClock
) -> None:
    add_job("orders")
    change_description(store, "orders", based_on=1, to="second", at=clock)
    with pytest.raises(Conflict, match="job 'orders'"), store.transaction() as repos:
        repos.jobs.delete("orders", expected_version=1)
    with store.transaction() as repos:
        repos.jobs.delete("orders", expected_version=2)
        assert repos.jobs.find("orders") is None


def test_deleting_a_missing_job_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="job 'ghost'"), store.transaction() as repos:
        repos.jobs.delete("ghost")


def test_records_are_copies_that_cannot_change_the_store(store: Store, add_job: AddJob) -> None:
    job = add_job("orders")
    job.manifest["spec"]["bundle"] = "tampered"
    with store.transaction() as repos:
        assert repos.jobs.get("orders").manifest["spec"]["bundle"] == "default"
