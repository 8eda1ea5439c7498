"""Settings → Users & groups and Bundles over HTTP: each page's happy path,
bad input sent back beside its field (422, what was typed kept, nothing written), and a plain
user refused (403, and no link to it in the layout). Also: the Secrets page offers only the
bundles the person may see."""

from __future__ import annotations

from contextlib import closing

from streamjobs.domain.access import (
    BundleGrant,
    DomainPermission,
    Permission,
    PrincipalKind,
    Subject,
    SubjectKind,
)
from streamjobs.domain.quotas import Quota
from tests.factories import console_manifest
from tests.staged_server import Stage
from tests.web.access_helpers import (
    PASSWORD,
    add_user,
    admin_of,
    field_error,
    nav_links,
    read,
    signed_in,
)
from tests.web.conftest import Browser

USERS = "/settings/users"
BUNDLES = "/settings/bundles"


# ---------------------------------------------------------------- Users & groups


def test_users_and_groups_are_managed_on_one_page(stage: Stage, browser: Browser) -> None:
    services = stage.services
    admin = admin_of(stage)
    page = browser.page(USERS)
    assert page.status_code == 200
    assert 'aria-current="page">Users &amp; groups' in page.text

    created = browser.submit(USERS, {"name": "alice", "kind": "user", "password": PASSWORD})
    assert created.status_code == 303
    assert created.headers["location"].startswith(f"{USERS}?done=user-created&name=alice")
    assert "“alice” created." in browser.page(created.headers["location"]).text
    signed_in(stage, "alice").client.close()  # the password works

    robot = browser.submit(USERS, {"name": "robot", "kind": "serviceAccount"})
    assert robot.status_code == 303
    assert services.people.get_user("robot", actor=admin).user.kind is PrincipalKind.SERVICE_ACCOUNT

    assert browser.submit("/settings/groups", {"name": "payments"}).status_code == 303
    added = browser.submit("/settings/groups/payments/members", {"user": "alice"})
    assert added.status_code == 303
    granted = browser.submit(
        "/settings/permissions", {"subject": "group:payments", "permission": "CREATE_JOB"}
    )
    assert granted.status_code == 303
    run_as = browser.submit("/settings/users/robot/run-as", {"subject": "group:payments"})
    assert run_as.status_code == 303

    alice = services.people.get_user("alice", actor=admin)
    assert alice.groups == {"payments"}
    assert alice.permissions == {DomainPermission.CREATE_JOB}
    assert services.people.get_user("robot", actor=admin).runners == (
        Subject(SubjectKind.GROUP, "payments"),
    )
    shown = read(browser.page(USERS).text)
    assert shown.find("tr", None, data_user="alice")
    row = next(e for e in shown.elements if e.attrs.get("data-user") == "alice")
    assert "payments" in row.text
    assert "Create Spark Job" in row.text
    assert (
        "Service account"
        in next(e for e in shown.elements if e.attrs.get("data-user") == "robot").text
    )

    revoked = browser.submit(
        "/settings/permissions/revoke", {"subject": "group:payments", "permission": "CREATE_JOB"}
    )
    assert revoked.status_code == 303
    browser.submit("/settings/users/robot/run-as/revoke", {"subject": "group:payments"})
    browser.submit("/settings/groups/payments/members/alice/remove", {})
    alice = services.people.get_user("alice", actor=admin)
    assert alice.groups == frozenset()
    assert alice.permissions == frozenset()
    assert services.people.get_user("robot", actor=admin).runners == ()

    assert browser.submit("/settings/groups/payments/delete", {}).status_code == 303
    assert browser.submit("/settings/users/alice/delete", {}).status_code == 303
    assert [p.user.name for p in services.people.list_users(actor=admin)] == ["admin", "robot"]
    assert services.people.list_groups(actor=admin) == []
    myself = browser.submit("/settings/users/admin/delete", {})
    assert myself.status_code == 409
    assert "you cannot delete yourself" in myself.text


def test_bad_user_input_is_shown_beside_its_field_and_nothing_is_written(
    stage: Stage, browser: Browser
) -> None:
    admin = admin_of(stage)
    short = browser.submit(USERS, {"name": "bob", "kind": "user", "password": "short"})
    assert short.status_code == 422
    assert "at least 12 characters" in field_error(short.text, "user-password")
    assert read(short.text).by_id["user-name"].attrs["value"] == "bob"
    assert "short" not in short.text.split('id="user-password"')[1].split(">")[0]
    assert "bob" not in [p.user.name for p in stage.services.people.list_users(actor=admin)]

    bad_name = browser.submit(USERS, {"name": "no spaces", "kind": "user", "password": ""})
    assert bad_name.status_code == 422
    assert "is not a valid name" in field_error(bad_name.text, "user-name")

    taken = browser.submit(USERS, {"name": "admin", "kind": "user"})
    assert taken.status_code == 409
    assert "already exists" in field_error(taken.text, "user-name")

    subject = browser.submit(
        "/settings/permissions", {"subject": "alice", "permission": "CREATE_JOB"}
    )
    assert subject.status_code == 422
    assert "is not 'user:NAME' or 'group:NAME'" in field_error(subject.text, "grant-subject")
    assert read(subject.text).by_id["grant-subject"].attrs["value"] == "alice"
    nobody = browser.submit(
        "/settings/permissions", {"subject": "user:nobody", "permission": "CREATE_JOB"}
    )
    assert nobody.status_code == 422
    assert "no user is called 'nobody'" in field_error(nobody.text, "grant-subject")
    assert stage.services.people.domain_grants(actor=admin) == []

    browser.submit("/settings/groups", {"name": "ops"})
    member = browser.submit("/settings/groups/ops/members", {"user": "ghost"})
    assert member.status_code == 422
    assert "no user is called 'ghost'" in field_error(member.text, "member-1")


def test_a_plain_user_may_not_manage_people(stage: Stage, browser: Browser) -> None:
    assert "Users & groups" in nav_links(browser.page("/jobs").text)
    add_user(stage, "plain")
    plain = signed_in(stage, "plain")
    with closing(plain.client):
        links = nav_links(plain.page("/jobs").text)
        assert "Users & groups" not in links
        assert "Audit" not in links
        assert {"Access tokens", "Secrets", "Bundles", "Node types"} <= set(links)
        refused = plain.page(USERS)
        assert refused.status_code == 403
        assert "Manage users" in refused.text
        assert plain.submit(USERS, {"name": "eve", "kind": "user"}).status_code == 403
        assert plain.submit("/settings/groups", {"name": "evil"}).status_code == 403

    add_user(stage, "bundler", domain=[DomainPermission.MANAGE_BUNDLES])
    bundler = signed_in(stage, "bundler")
    with closing(bundler.client):
        page = bundler.page(USERS)
        assert page.status_code == 200
        assert "You may look but not change anything here" in page.text
        assert not read(page.text).forms_to(USERS)


# ---------------------------------------------------------------- Bundles


def test_bundles_are_created_configured_granted_and_deleted(stage: Stage, browser: Browser) -> None:
    services = stage.services
    admin = admin_of(stage)
    add_user(stage, "alice")
    created = browser.submit(
        BUNDLES,
        {
            "name": "pay",
            "description": "Payments",
            "maxRunningApplications": "2",
            "maxCores": "",
            "maxMemoryMb": "8192",
        },
    )
    assert created.status_code == 303
    assert created.headers["location"] == f"{BUNDLES}/pay?done=created&name=pay"
    assert services.bundles.get("pay", actor=admin).bundle.quota == Quota(2, None, 8192)

    put = stage.api.put("/api/v1/jobs/pay-job", json=console_manifest("pay-job", bundle="pay"))
    assert put.status_code in (200, 201), put.text
    assert stage.api.post("/api/v1/jobs/pay-job/run").status_code in (200, 201)

    listing = read(browser.page(BUNDLES).text)
    (row,) = listing.find("tr", None, data_bundle="pay")
    text = " ".join(row.text.split())
    assert "Payments" in text
    assert "/ 2" in text
    assert "/ no limit" in text
    assert "/ 8 GB" in text
    figures = [e for e in listing.elements if e.attrs.get("data-figure") == "Running applications"]
    assert any(" ".join(f.text.split()).startswith("1 ") for f in figures)

    page = browser.page(created.headers["location"])
    assert "Bundle “pay” created." in page.text
    shown = read(page.text)
    refused = shown.find("button", "Delete", title="Holds 1 job(s); move or delete them first")
    assert refused
    assert refused[0].disabled

    quotas = browser.submit(
        f"{BUNDLES}/pay",
        {
            "description": "Payments",
            "maxRunningApplications": "",
            "maxCores": "16",
            "maxMemoryMb": "",
        },
    )
    assert quotas.status_code == 303
    assert services.bundles.get("pay", actor=admin).bundle.quota == Quota(None, 16, None)

    grants = browser.submit(
        f"{BUNDLES}/pay/grants",
        {"subject-0": "user:alice", "permission-0": ["VIEW", "RUN"], "subject-1": ""},
    )
    assert grants.status_code == 303
    assert set(services.bundles.get("pay", actor=admin).grants) == {
        BundleGrant("pay", Subject(SubjectKind.USER, "alice"), Permission.VIEW),
        BundleGrant("pay", Subject(SubjectKind.USER, "alice"), Permission.RUN),
    }
    rows = read(browser.page(f"{BUNDLES}/pay").text)
    assert rows.by_id["grant-subject-0"].attrs["value"] == "user:alice"
    assert "checked" in rows.by_id["grant-0-RUN"].attrs
    assert "checked" not in rows.by_id["grant-0-DELETE"].attrs
    assert rows.by_id["grant-subject-1"].attrs["value"] == ""

    cleared = browser.submit(f"{BUNDLES}/pay/grants", {"subject-0": "user:alice"})
    assert cleared.status_code == 303
    assert services.bundles.get("pay", actor=admin).grants == ()

    browser.submit(BUNDLES, {"name": "empty"})
    assert browser.submit(f"{BUNDLES}/empty/delete", {}).status_code == 303
    assert [v.bundle.name for v in services.bundles.list(actor=admin)] == ["default", "pay"]
    assert browser.submit(f"{BUNDLES}/pay/delete", {}).status_code == 409


def test_bad_bundle_input_is_shown_beside_its_field(stage: Stage, browser: Browser) -> None:
    admin = admin_of(stage)
    fields = {"name": "pay", "description": "x", "maxRunningApplications": "", "maxMemoryMb": ""}
    bad = browser.submit(BUNDLES, {**fields, "maxCores": "lots"})
    assert bad.status_code == 422
    assert "'lots' is not a whole number" in field_error(bad.text, "bundle-cores")
    page = read(bad.text)
    assert page.by_id["bundle-cores"].attrs["value"] == "lots"
    assert page.by_id["bundle-name"].attrs["value"] == "pay"
    negative = browser.submit(BUNDLES, {**fields, "maxCores": "-1"})
    assert negative.status_code == 422
    assert "must be between 0 and" in field_error(negative.text, "bundle-cores")
    assert [v.bundle.name for v in stage.services.bundles.list(actor=admin)] == ["default"]

    grants = browser.submit(
        f"{BUNDLES}/default/grants",
        {
            "subject-0": "user:nobody",
            "permission-0": "VIEW",
            "subject-1": "alice",
            "permission-1": "RUN",
        },
    )
    assert grants.status_code == 422
    rows = read(grants.text)
    assert rows.by_id["grant-subject-0"].attrs["value"] == "user:nobody"
    errors = " ".join(rows.by_id["grant-error-1"].text.split())
    assert "is not 'user:NAME' or 'group:NAME'" in errors
    assert "checked" in rows.by_id["grant-1-RUN"].attrs
    missing = browser.submit(
        f"{BUNDLES}/default/grants", {"subject-0": "user:nobody", "permission-0": "VIEW"}
    )
    assert missing.status_code == 422
    assert "no user is called 'nobody'" in read(missing.text).by_id["grant-error-0"].text
    assert stage.services.bundles.get("default", actor=admin).grants == ()


def test_without_manage_bundles_one_sees_only_ones_own_bundles(
    stage: Stage, browser: Browser
) -> None:
    admin = admin_of(stage)
    stage.services.bundles.create("pay", actor=admin)
    stage.services.bundles.create("hidden", actor=admin)
    add_user(stage, "alice", bundle="pay", permissions=[Permission.VIEW])
    alice = signed_in(stage, "alice")
    with closing(alice.client):
        page = alice.page(BUNDLES)
        assert page.status_code == 200
        listing = read(page.text)
        assert [e.attrs["data-bundle"] for e in listing.find("tr") if "data-bundle" in e.attrs] == [
            "pay"
        ]
        assert not listing.forms_to(BUNDLES)
        detail = alice.page(f"{BUNDLES}/pay")
        assert detail.status_code == 200
        assert not read(detail.text).forms_to(f"{BUNDLES}/pay/grants")
        assert "user:alice" in detail.text
        assert alice.page(f"{BUNDLES}/hidden").status_code == 404
        assert alice.submit(BUNDLES, {"name": "mine"}).status_code == 403
        assert alice.submit(f"{BUNDLES}/pay", {"maxCores": "1"}).status_code == 403
        assert alice.submit(f"{BUNDLES}/pay/delete", {}).status_code == 403

        secrets = read(alice.page("/settings/secrets").text)
        options = [e.attrs["value"] for e in secrets.find("option") if "value" in e.attrs]
        assert options == ["pay"]
        assert alice.page("/settings/secrets?bundle=hidden").status_code == 404
