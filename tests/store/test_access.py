"""Groups, grants, bundle quotas and what running applications take, on each backend."""

from __future__ import annotations

import pytest

from streamjobs.domain.access import (
    BundleGrant,
    DomainPermission,
    Permission,
    PrincipalKind,
    Subject,
)
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.quotas import Demand, Quota
from streamjobs.domain.states import AppState
from streamjobs.store import Store

ALICE = Subject.parse("user:alice")
PAYMENTS = Subject.parse("group:payments")


@pytest.fixture
def people(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        repos.users.add("alice", is_admin=False, at=clock.now())
        repos.users.add("bob", is_admin=False, at=clock.now())
        repos.users.add("svc", is_admin=False, at=clock.now(), kind=PrincipalKind.SERVICE_ACCOUNT)
        repos.groups.add("payments", clock.now())
        repos.bundles.add("pay", clock.now(), quota=Quota(max_running_applications=2))


@pytest.mark.usefixtures("people")
def test_groups_keep_their_members(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        assert repos.groups.add_member("payments", "alice")
        assert not repos.groups.add_member("payments", "alice")
        repos.groups.add_member("payments", "bob")
        assert repos.groups.get("payments").members == ("alice", "bob")
        assert repos.groups.groups_of("alice") == {"payments"}
        repos.groups.remove_member("payments", "bob")
        with pytest.raises(NotFound, match="member of group 'payments'"):
            repos.groups.remove_member("payments", "bob")
        with pytest.raises(AlreadyExists, match="group 'payments'"):
            repos.groups.add("payments", clock.now())
        assert [group.members for group in repos.groups.list()] == [("alice",)]
        assert repos.users.get("svc").kind is PrincipalKind.SERVICE_ACCOUNT


@pytest.mark.usefixtures("people")
def test_a_deleted_user_leaves_its_groups(store: Store) -> None:
    with store.transaction() as repos:
        repos.groups.add_member("payments", "bob")
        repos.users.delete("bob")
        assert repos.groups.get("payments").members == ()
        with pytest.raises(NotFound):
            repos.users.delete("bob")


@pytest.mark.usefixtures("people")
def test_domain_permissions_come_directly_or_through_groups(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.grants.grant_domain(ALICE, DomainPermission.CREATE_JOB)
        assert not repos.grants.grant_domain(ALICE, DomainPermission.CREATE_JOB)
        repos.grants.grant_domain(PAYMENTS, DomainPermission.MANAGE_BUNDLES)
        assert repos.grants.domain_permissions("alice", {"payments"}) == {
            DomainPermission.CREATE_JOB,
            DomainPermission.MANAGE_BUNDLES,
        }
        assert repos.grants.domain_permissions("alice", set()) == {DomainPermission.CREATE_JOB}
        assert repos.grants.revoke_domain(ALICE, DomainPermission.CREATE_JOB)
        assert not repos.grants.revoke_domain(ALICE, DomainPermission.CREATE_JOB)
        assert [str(g.subject) for g in repos.grants.domain_grants()] == ["group:payments"]


@pytest.mark.usefixtures("people")
def test_bundle_grants_are_replaced_whole_and_read_per_subject(store: Store) -> None:
    grants = [
        BundleGrant("pay", ALICE, Permission.VIEW),
        BundleGrant("pay", PAYMENTS, Permission.RUN),
        BundleGrant("pay", PAYMENTS, Permission.RUN),
    ]
    with store.transaction() as repos:
        repos.grants.set_bundle_grants("pay", grants)
        assert set(repos.grants.bundle_grants(bundle="pay")) == set(grants)
        assert repos.grants.bundle_grants(user="bob") == []
        assert repos.grants.bundle_grants(user="bob", groups={"payments"}) == [grants[1]]
        repos.grants.set_bundle_grants("pay", [grants[0]])
        assert repos.grants.bundle_grants() == [grants[0]]
        repos.grants.forget_subject(ALICE)
        assert repos.grants.bundle_grants() == []


@pytest.mark.usefixtures("people")
def test_service_account_grants(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.grants.grant_service_account("svc", PAYMENTS)
        assert not repos.grants.grant_service_account("svc", PAYMENTS)
        assert repos.grants.service_account_grants(service_account="svc") == [("svc", PAYMENTS)]
        assert repos.grants.revoke_service_account("svc", PAYMENTS)
        assert repos.grants.service_account_grants() == []


@pytest.mark.usefixtures("people")
def test_bundles_keep_their_quotas(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.bundles.get("pay").quota == Quota(max_running_applications=2)
        repos.bundles.update("pay", description="Payments", quota=Quota(max_cores=8))
        changed = repos.bundles.get("pay")
        assert (changed.description, changed.quota) == ("Payments", Quota(max_cores=8))
        repos.bundles.lock("pay")
        with pytest.raises(NotFound, match="resource bundle 'gone'"):
            repos.bundles.lock("gone")
        repos.bundles.delete("pay")
        assert not repos.bundles.exists("pay")


@pytest.mark.usefixtures("people")
def test_running_applications_count_against_their_bundle(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        for job, state in (("a", AppState.RUNNING), ("b", AppState.PENDING_RERUN)):
            repos.applications.add(
                job_name=job,
                namespace="default",
                bundle="pay",
                tags={},
                spec={},
                state=state,
                triggered_by="alice",
                run_as="alice",
                at=clock.now(),
                demand=Demand(1, 3, 2048),
            )
        for job, state in (("c", AppState.SUSPENDED), ("d", AppState.FAILED)):
            repos.applications.add(
                job_name=job,
                namespace="default",
                bundle="pay",
                tags={},
                spec={},
                state=state,
                triggered_by="alice",
                run_as="alice",
                at=clock.now(),
                demand=Demand(1, 5, 5),
            )
        assert repos.applications.demand_in_bundle("pay") == Demand(2, 6, 4096)
        assert repos.applications.demand_in_bundle("other") == Demand()
        assert repos.applications.list(bundles=["other"])[1] == 0
        assert repos.applications.list(bundles=["pay"])[1] == 4
