"""The permission rules of ``domain.access``, decided without any store."""

from __future__ import annotations

import pytest

from streamjobs.domain.access import (
    NEEDS,
    BundleGrant,
    DomainPermission,
    JobAction,
    JobRef,
    Permission,
    Principal,
    PrincipalKind,
    Subject,
    SubjectKind,
    bundle_permissions,
    job_actions,
    name_errors,
    require_create_job,
    require_job_action,
    require_move_to_bundle,
    require_run_as,
    visible_bundles,
)
from streamjobs.domain.errors import Forbidden, InvalidInput, NotFound

ALICE = Principal("alice", groups=frozenset({"payments"}))
ADMIN = Principal("root", is_admin=True)
JOB = JobRef("orders", "pay")


def grant(permission: Permission, subject: str = "user:alice", bundle: str = "pay") -> BundleGrant:
    return BundleGrant(bundle, Subject.parse(subject), permission)


def test_every_action_needs_one_permission() -> None:
    assert set(NEEDS) == set(JobAction)


@pytest.mark.parametrize(
    ("grants", "expected"),
    [
        ([], frozenset()),
        ([grant(Permission.VIEW)], {Permission.VIEW}),
        ([grant(Permission.RUN)], {Permission.VIEW, Permission.RUN}),
        ([grant(Permission.UPDATE, "group:payments")], {Permission.VIEW, Permission.UPDATE}),
        ([grant(Permission.DELETE, "group:other")], frozenset()),
        ([grant(Permission.RUN, "user:bob")], frozenset()),
        ([grant(Permission.RUN, bundle="other")], frozenset()),
    ],
)
def test_bundle_permissions_come_from_grants_to_the_user_or_their_groups(
    grants: list[BundleGrant], expected: set[Permission]
) -> None:
    assert bundle_permissions(ALICE, grants, "pay") == frozenset(expected)


def test_an_admin_holds_every_permission_everywhere() -> None:
    assert bundle_permissions(ADMIN, [], "any") == frozenset(Permission)
    assert visible_bundles(ADMIN, []) is None


def test_a_job_that_may_not_be_seen_is_not_found_rather_than_forbidden() -> None:
    with pytest.raises(NotFound, match="job 'orders' does not exist"):
        require_job_action(ALICE, [], JobAction.RUN, JOB)


def test_seeing_without_running_is_forbidden_naming_the_permission() -> None:
    with pytest.raises(Forbidden, match="needs the RUN permission on resource bundle 'pay'"):
        require_job_action(ALICE, [grant(Permission.VIEW)], JobAction.ABORT, JOB)
    require_job_action(ALICE, [grant(Permission.VIEW)], JobAction.VIEW, JOB)


def test_job_actions_name_what_is_missing_for_each_action() -> None:
    actions = job_actions(ALICE, [grant(Permission.RUN)], JOB)
    assert actions[JobAction.RUN] is None
    assert actions[JobAction.ABORT] is None
    assert actions[JobAction.CONFIGURE] is Permission.UPDATE
    assert actions[JobAction.DELETE] is Permission.DELETE


def test_visible_bundles_are_those_with_any_grant() -> None:
    grants = [grant(Permission.VIEW), grant(Permission.RUN, "group:payments", "ops")]
    assert visible_bundles(ALICE, grants) == {"pay", "ops"}


def test_creating_a_job_needs_the_domain_permission_and_update_on_the_bundle() -> None:
    with pytest.raises(Forbidden, match="Create Spark Job"):
        require_create_job(ALICE, [grant(Permission.UPDATE)], "pay")
    creator = Principal("alice", permissions=frozenset({DomainPermission.CREATE_JOB}))
    with pytest.raises(Forbidden, match="UPDATE permission"):
        require_create_job(creator, [grant(Permission.VIEW)], "pay")
    require_create_job(creator, [grant(Permission.UPDATE)], "pay")


def test_moving_a_job_needs_update_on_the_bundle_it_moves_to() -> None:
    with pytest.raises(Forbidden, match="into resource bundle 'ops'"):
        require_move_to_bundle(ALICE, [grant(Permission.UPDATE)], JOB, "ops")
    require_move_to_bundle(ALICE, [], JOB, "pay")


def test_run_as_oneself_or_a_granted_service_account_only() -> None:
    accounts = {"svc-pay"}
    require_run_as(ALICE, "alice", service_accounts=accounts, service_account_grants=[])
    granted = [("svc-pay", Subject(SubjectKind.GROUP, "payments"))]
    require_run_as(ALICE, "svc-pay", service_accounts=accounts, service_account_grants=granted)
    with pytest.raises(Forbidden, match=r"spec.runAs: 'alice' may not run jobs as 'svc-pay'"):
        require_run_as(ALICE, "svc-pay", service_accounts=accounts, service_account_grants=[])
    with pytest.raises(Forbidden, match="'bob'"):
        # a user is not a service account, whatever the grants say
        require_run_as(
            ALICE,
            "bob",
            service_accounts=accounts,
            service_account_grants=[("bob", Subject(SubjectKind.USER, "alice"))],
        )
    require_run_as(ADMIN, "svc-pay", service_accounts=accounts, service_account_grants=[])


@pytest.mark.parametrize("text", ["alice", "user", "user:", "team:x", ":x", "group: "])
def test_subjects_that_do_not_parse_name_the_field(text: str) -> None:
    with pytest.raises(InvalidInput, match="grants\\[0\\]"):
        Subject.parse(text, path="grants[0]")


def test_subjects_print_as_they_parse() -> None:
    assert str(Subject.parse("group:data-eng")) == "group:data-eng"
    assert Subject.parse("user:svc").kind is SubjectKind.USER


def test_names_of_identities() -> None:
    assert name_errors("svc-payments@corp.example", "name") == []
    assert name_errors("", "name")[0].path == "name"
    assert name_errors("user:alice", "name")
    assert name_errors("a" * 256, "name")
    assert PrincipalKind("serviceAccount") is PrincipalKind.SERVICE_ACCOUNT
