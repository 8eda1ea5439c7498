"""Permissions and quotas as the use cases enforce them, on each backend: hidden jobs are not
found, an action without its permission is forbidden, and Run stays within the bundle's quotas."""

from __future__ import annotations

import pytest

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    Principal,
    PrincipalKind,
    Subject,
)
from streamjobs.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from streamjobs.domain.quotas import Quota, QuotaExceeded
from streamjobs.domain.states import AppState
from streamjobs.services.applications import ApplicationQuery
from streamjobs.services.audit_log import AuditQuery
from streamjobs.services.container import Services
from streamjobs.services.jobs import JobQuery
from tests.factories import pipeline_manifest

ADMIN = Actor(Principal("admin", is_admin=True))


def member(services: Services, name: str, *permissions: Permission, bundle: str = "pay") -> Actor:
    """A user holding ``permissions`` on ``bundle`` (none: a user without grants)."""
    services.people.create_user(name, actor=ADMIN)
    if permissions:
        current = services.bundles.get(bundle, actor=ADMIN).grants
        subject = Subject.parse(f"user:{name}")
        grants = [*current, *(BundleGrant(bundle, subject, p) for p in permissions)]
        services.bundles.set_grants(bundle, grants, actor=ADMIN)
    return Actor(services.identity.principal(name))


@pytest.fixture
def pay(services: Services) -> Services:
    """A bundle ``pay`` with the job ``orders`` in it."""
    services.bundles.create("pay", actor=ADMIN, data_roots=["file:///tmp/out"])
    services.jobs.create(pipeline_manifest("orders", bundle="pay"), actor=ADMIN)
    return services


def test_a_job_without_view_is_absent_everywhere(pay: Services) -> None:
    stranger = member(pay, "stranger")
    application = pay.applications.run("orders", actor=ADMIN)
    assert pay.jobs.list(JobQuery(), actor=stranger).items == []
    assert pay.applications.list(ApplicationQuery(), actor=stranger).total == 0
    for attempt in (
        lambda: pay.jobs.get("orders", actor=stranger),
        lambda: pay.jobs.template("orders", actor=stranger),
        lambda: pay.applications.run("orders", actor=stranger),
        lambda: pay.applications.abort(application.id, actor=stranger),
        lambda: pay.applications.get(application.id, actor=stranger),
        lambda: pay.applications.events(application.id, actor=stranger),
        lambda: pay.applications.template(application.id, actor=stranger),
        lambda: pay.logs.read(application.id, actor=stranger),
        lambda: pay.jobs.delete("orders", actor=stranger),
        lambda: pay.secrets.list("pay", actor=stranger),
    ):
        with pytest.raises(NotFound):
            attempt()


def test_view_only_sees_but_cannot_run_abort_configure_or_delete(pay: Services) -> None:
    viewer = member(pay, "viewer", Permission.VIEW)
    assert [job.name for job in pay.jobs.list(JobQuery(), actor=viewer).items] == ["orders"]
    with pytest.raises(Forbidden, match="needs the RUN permission on resource bundle 'pay'"):
        pay.applications.run("orders", actor=viewer)
    application = pay.applications.run("orders", actor=ADMIN)
    assert pay.applications.get(application.id, actor=viewer).application.id == application.id
    for attempt, needed in (
        (lambda: pay.applications.abort(application.id, actor=viewer), "RUN"),
        (lambda: pay.applications.stop("orders", actor=viewer), "RUN"),
        (
            lambda: pay.jobs.update("orders", {"metadata": {"description": "x"}}, actor=viewer),
            "UPDATE",
        ),
        (lambda: pay.jobs.delete("orders", actor=viewer), "DELETE"),
    ):
        with pytest.raises(Forbidden, match=f"needs the {needed} permission"):
            attempt()


def test_run_records_who_triggered_it_and_whom_it_runs_as(pay: Services) -> None:
    runner = member(pay, "runner", Permission.RUN)
    application = pay.applications.run("orders", actor=runner)
    assert (application.triggered_by, application.run_as) == ("runner", "admin")
    entry = pay.audit.list(AuditQuery(limit=1), actor=ADMIN).items[0]
    assert (entry.actor, entry.action, entry.resource_name) == ("runner", "job.run", "orders")


def test_creating_needs_create_job_and_update_on_the_bundle(pay: Services) -> None:
    author = member(pay, "author", Permission.UPDATE)
    with pytest.raises(Forbidden, match="Create Spark Job"):
        pay.jobs.create(pipeline_manifest("mine", bundle="pay"), actor=author)
    pay.people.set_domain_grant(
        Subject.parse("user:author"), DomainPermission.CREATE_JOB, granted=True, actor=ADMIN
    )
    author = Actor(pay.identity.principal("author"))
    created = pay.jobs.create(pipeline_manifest("mine", bundle="pay"), actor=author)
    assert created.created_by == "author"
    with pytest.raises(Forbidden, match="bundle 'default' needs the UPDATE permission"):
        pay.jobs.create(pipeline_manifest("elsewhere"), actor=author)
    with pytest.raises(Forbidden, match="into resource bundle 'default'"):
        pay.jobs.update("mine", {"spec": {"bundle": "default"}}, actor=author)


def test_run_as_only_oneself_or_a_granted_service_account(pay: Services) -> None:
    pay.people.create_user("svc-pay", actor=ADMIN, kind=PrincipalKind.SERVICE_ACCOUNT)
    author = member(pay, "author", Permission.UPDATE)
    manifest = pipeline_manifest("orders", bundle="pay", runAs="svc-pay")
    with pytest.raises(Forbidden, match=r"spec\.runAs: 'author' may not run jobs as 'svc-pay'"):
        pay.jobs.apply("orders", manifest, actor=author)
    pay.people.set_service_account_grant(
        "svc-pay", Subject.parse("user:author"), granted=True, actor=ADMIN
    )
    pay.jobs.apply("orders", manifest, actor=author)
    assert pay.applications.run("orders", actor=ADMIN).run_as == "svc-pay"
    with pytest.raises(InvalidInput, match=r"spec\.runAs: no user or service account is called"):
        pay.jobs.apply(
            "orders", pipeline_manifest("orders", bundle="pay", runAs="ghost"), actor=ADMIN
        )


def test_the_run_over_the_running_applications_quota_is_refused(pay: Services) -> None:
    pay.bundles.update(
        "pay", actor=ADMIN, description=None, quota=Quota(max_running_applications=2)
    )
    for name in ("second", "third"):
        pay.jobs.create(pipeline_manifest(name, bundle="pay"), actor=ADMIN)
    pay.applications.run("orders", actor=ADMIN)
    pay.applications.run("second", actor=ADMIN)
    with pytest.raises(QuotaExceeded) as refused:
        pay.applications.run("third", actor=ADMIN)
    assert refused.value.detail == (
        "resource bundle 'pay' quota of 2 running applications would be exceeded: "
        "2 in use, this run needs 1 more (3 in all)"
    )
    assert isinstance(refused.value, Conflict)
    assert pay.applications.list(ApplicationQuery(job_name="third"), actor=ADMIN).total == 0
    pay.applications.abort(_live(pay, "orders"), actor=ADMIN)
    with pytest.raises(QuotaExceeded):  # its driver may still run until it is gone
        pay.applications.run("third", actor=ADMIN)
    _set_state(pay, _live(pay, "orders"), AppState.ABORTED)
    pay.applications.run("third", actor=ADMIN)


def test_the_run_over_the_cores_quota_is_refused_with_the_figures(pay: Services) -> None:
    pay.bundles.update("pay", actor=ADMIN, description=None, quota=Quota(max_cores=4))
    standard = {"deployment": "standard", "driver": "small", "executor": "medium", "executors": 1}
    pay.jobs.create(pipeline_manifest("big", bundle="pay", instance=standard), actor=ADMIN)
    pay.applications.run("big", actor=ADMIN)  # a 1-core driver and a 2-core executor
    pay.applications.run("orders", actor=ADMIN)  # 1 more: 4 in all
    pay.jobs.create(pipeline_manifest("fifth", bundle="pay"), actor=ADMIN)
    with pytest.raises(QuotaExceeded) as refused:
        pay.applications.run("fifth", actor=ADMIN)
    assert refused.value.detail == (
        "resource bundle 'pay' quota of 4 cores would be exceeded: "
        "4 in use, this run needs 1 more (5 in all)"
    )


def test_a_resumed_application_is_counted_again(pay: Services) -> None:
    pay.jobs.create(pipeline_manifest("second", bundle="pay"), actor=ADMIN)
    application = pay.applications.run("orders", actor=ADMIN)
    _set_state(pay, application.id, AppState.SUSPENDED)
    pay.bundles.update(
        "pay", actor=ADMIN, description=None, quota=Quota(max_running_applications=1)
    )
    pay.applications.run("second", actor=ADMIN)
    with pytest.raises(QuotaExceeded, match="1 in use"):
        pay.applications.resume("orders", actor=ADMIN)


def _live(services: Services, job: str) -> str:
    with services.store.transaction() as repos:
        live = repos.applications.live_for_job(job)
    assert live is not None
    return live.id


def _set_state(services: Services, application_id: str, state: AppState) -> None:
    """Move the application as the supervisor would once its driver is gone."""
    with services.store.transaction() as repos:
        record = repos.applications.get(application_id)
        repos.applications.update(
            application_id, version=record.version, at=services.clock.now(), state=state
        )


def test_a_user_with_a_bad_password_is_not_created_at_all(services: Services) -> None:
    with pytest.raises(InvalidInput, match="password: must be at least 12 characters"):
        services.people.create_user("bob", actor=ADMIN, password="short")
    with services.store.transaction() as repos:
        assert repos.users.find("bob") is None
    with pytest.raises(InvalidInput, match="a service account has no password"):
        services.people.create_user(
            "svc", actor=ADMIN, kind=PrincipalKind.SERVICE_ACCOUNT, password="x" * 12
        )
    with pytest.raises(InvalidInput, match="is not a valid name"):
        services.people.create_user("user:bob", actor=ADMIN)


def test_only_admins_make_admins_and_nobody_deletes_themselves(services: Services) -> None:
    services.identity.bootstrap_admin()
    services.people.create_user("keeper", actor=ADMIN)
    services.people.set_domain_grant(
        Subject.parse("user:keeper"), DomainPermission.MANAGE_USERS, granted=True, actor=ADMIN
    )
    keeper = Actor(services.identity.principal("keeper"))
    with pytest.raises(Forbidden, match="creating an admin is for admins only"):
        services.people.create_user("boss", actor=keeper, is_admin=True)
    services.people.create_user("helper", actor=keeper)
    with pytest.raises(Conflict, match="you cannot delete yourself"):
        services.people.delete_user("keeper", actor=keeper)
    with pytest.raises(Forbidden, match="deleting an admin is for admins only"):
        services.people.delete_user("admin", actor=keeper)


def test_a_grant_change_takes_effect_on_the_next_request(pay: Services) -> None:
    pay.people.create_user("late", actor=ADMIN)
    token = pay.identity.issue_token("late", "t", actor=ADMIN)
    assert pay.identity.authenticate(token).permissions == frozenset()
    pay.people.set_domain_grant(
        Subject.parse("user:late"), DomainPermission.CREATE_JOB, granted=True, actor=ADMIN
    )
    assert pay.identity.authenticate(token).permissions == {DomainPermission.CREATE_JOB}
    pay.people.create_group("ops", actor=ADMIN)
    pay.people.set_membership("ops", "late", member=True, actor=ADMIN)
    assert pay.identity.authenticate(token).groups == {"ops"}
