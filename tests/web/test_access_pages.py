"""The job page's buttons follow the signed-in person's permissions: the UI permission matrix.

For each role (VIEW only, VIEW+RUN, UPDATE with Create Spark Job, DELETE, admin) the job page
and the application page show Run, Abort app, Configure, Delete and Duplicate either enabled, or
disabled with a tooltip (and accessible text) naming the missing permission and without a
no-script form; a person without VIEW gets the 404 page. What the buttons say is what the
services answer: a refused no-script form gets 403.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from streamjobs.domain.access import DomainPermission, Permission
from tests.factories import pipeline_manifest
from tests.staged_server import Stage
from tests.web.access_helpers import Page, add_user, admin_of, read, signed_in
from tests.web.conftest import Browser

BUNDLE = "pay"
JOB = "pay-job"
NEEDS_RUN = "Needs the RUN permission on resource bundle 'pay'"
NEEDS_UPDATE = "Needs the UPDATE permission on resource bundle 'pay'"
NEEDS_DELETE = "Needs the DELETE permission on resource bundle 'pay'"
NEEDS_CREATE = "Needs the “Create Spark Job” permission"
ACTIONS = ("run", "stop", "resume", "abort", "configure", "delete", "duplicate")
NOT_SUSPENDED = "Only a suspended application can be resumed"

ROLES: dict[str, dict[str, Any]] = {
    "view": {"permissions": [Permission.VIEW]},
    "view-run": {"permissions": [Permission.VIEW, Permission.RUN]},
    "update": {"permissions": [Permission.UPDATE], "domain": [DomainPermission.CREATE_JOB]},
    "delete": {"permissions": [Permission.DELETE]},
    "admin": {},
}
"""Each role's grants on the bundle ``pay`` (and domain permissions); admin is the admin."""

MATRIX: dict[str, dict[str, str | None]] = {
    "view": {
        "run": NEEDS_RUN,
        "stop": NEEDS_RUN,
        "resume": NEEDS_RUN,
        "abort": NEEDS_RUN,
        "configure": NEEDS_UPDATE,
        "delete": NEEDS_DELETE,
        "duplicate": NEEDS_CREATE,
    },
    "view-run": {
        "run": None,
        "stop": None,
        "resume": NOT_SUSPENDED,
        "abort": None,
        "configure": NEEDS_UPDATE,
        "delete": NEEDS_DELETE,
        "duplicate": NEEDS_CREATE,
    },
    "update": {
        "run": NEEDS_RUN,
        "stop": NEEDS_RUN,
        "resume": NEEDS_RUN,
        "abort": NEEDS_RUN,
        "configure": None,
        "delete": NEEDS_DELETE,
        "duplicate": None,
    },
    "delete": {
        "run": NEEDS_RUN,
        "stop": NEEDS_RUN,
        "resume": NEEDS_RUN,
        "abort": NEEDS_RUN,
        "configure": NEEDS_UPDATE,
        "delete": None,
        "duplicate": NEEDS_CREATE,
    },
    "admin": {**dict.fromkeys(ACTIONS), "resume": NOT_SUSPENDED},
}
"""For each role and button: None when enabled, else the tooltip of the disabled button."""


@pytest.fixture
def live_app(stage: Stage) -> str:
    """The bundle ``pay`` with the job ``pay-job`` and a live application of it; its id."""
    stage.services.bundles.create(BUNDLE, actor=admin_of(stage), data_roots=["file:///tmp/out"])
    put = stage.api.put(f"/api/v1/jobs/{JOB}", json=pipeline_manifest(JOB, bundle=BUNDLE))
    assert put.status_code in (200, 201), put.text
    run = stage.api.post(f"/api/v1/jobs/{JOB}/run")
    assert run.status_code in (200, 201), run.text
    return str(run.json()["id"])


@pytest.fixture
def as_role(
    stage: Stage, browser: Browser, live_app: str, request: pytest.FixtureRequest
) -> Iterator[tuple[str, Browser]]:
    """(the role, a browser signed in as a user holding just that role)."""
    role: str = request.param
    if role == "admin":
        yield role, browser
        return
    add_user(stage, role, bundle=BUNDLE, **ROLES[role])
    person = signed_in(stage, role)
    with closing(person.client):
        yield role, person


def refused_button(page: Page, label: str, reason: str) -> None:
    """``label`` is a disabled button whose tooltip and accessible description give ``reason``."""
    buttons = page.find("button", label, title=reason)
    assert buttons, f"no disabled {label!r} button titled {reason!r}"
    for button in buttons:
        assert button.disabled
        described = page.by_id[button.attrs["aria-describedby"]]
        assert " ".join(described.text.split()) == reason


def check_button(page: Page, action: str, application_id: str, expected: str | None) -> None:
    job_path = f"/jobs/{JOB}"
    abort_path = f"/applications/{application_id}/abort"
    if action == "run":
        if expected:
            refused_button(page, "Run", expected)
            assert not page.forms_to(f"{job_path}/run")
        else:
            assert page.forms_to(f"{job_path}/run")
            assert not page.find("button", "Run", disabled="")
    elif action == "abort":
        (item,) = page.find("button", "Abort app", data_abort=application_id)
        if expected:
            assert item.disabled
            assert item.attrs["title"] == expected
            assert page.by_id[item.attrs["aria-describedby"]].text == expected
            assert not page.forms_to(abort_path), "a no-script Abort app form is offered"
        else:
            assert not item.disabled
            assert page.forms_to(abort_path)
    elif action in ("stop", "resume"):
        label = action.capitalize()
        if expected:
            refused_button(page, label, expected)
            assert f"{action}-dialog" not in page.by_id
            assert not page.forms_to(f"{job_path}/{action}")
        else:
            assert page.find("button", label, data_open_dialog=f"{action}-dialog")
            assert page.forms_to(f"{job_path}/{action}")
    elif action == "configure":
        links = page.find("a", "Configure", href=f"{job_path}/configure")
        if expected:
            refused_button(page, "Configure", expected)
            assert not links
        else:
            assert links
    elif action == "delete":
        if expected:
            refused_button(page, "Delete", expected)
            assert not page.forms_to(f"{job_path}/delete")
            assert "delete-dialog" not in page.by_id
        else:
            assert page.find("button", "Delete", data_open_dialog="delete-dialog")
            assert page.forms_to(f"{job_path}/delete")
    elif action == "duplicate":
        links = page.find("a", "Duplicate", href=f"/jobs/new?from={JOB}")
        if expected:
            refused_button(page, "Duplicate", expected)
            assert not links
        else:
            assert links


@pytest.mark.parametrize("as_role", list(ROLES), indirect=True)
def test_the_job_page_buttons_follow_the_permissions(
    as_role: tuple[str, Browser], live_app: str
) -> None:
    role, person = as_role
    answer = person.page(f"/jobs/{JOB}")
    assert answer.status_code == 200, answer.text
    page = read(answer.text)
    for action in ACTIONS:
        check_button(page, action, live_app, MATRIX[role][action])

    application = read(person.page(f"/applications/{live_app}").text)
    (abort,) = application.find("button", "Abort app")
    if MATRIX[role]["abort"]:
        assert abort.disabled
        assert abort.attrs["title"] == MATRIX[role]["abort"]
        assert "data-forbidden" in abort.attrs
        assert application.by_id[abort.attrs["aria-describedby"]].text == NEEDS_RUN
    else:
        assert not abort.disabled


def test_without_view_the_job_is_not_found(stage: Stage, live_app: str) -> None:
    add_user(stage, "stranger")
    add_user(stage, "other", bundle="default", permissions=[Permission.VIEW])
    for name in ("stranger", "other"):
        person = signed_in(stage, name)
        with closing(person.client):
            assert person.page(f"/jobs/{JOB}").status_code == 404
            assert person.page(f"/applications/{live_app}").status_code == 404
            assert JOB not in person.page("/jobs").text


def test_a_refused_fallback_form_gets_403(stage: Stage, live_app: str) -> None:
    add_user(stage, "viewer", bundle=BUNDLE, permissions=[Permission.VIEW])
    viewer = signed_in(stage, "viewer")
    with closing(viewer.client):
        assert viewer.submit(f"/jobs/{JOB}/run", {}).status_code == 403
        assert viewer.submit(f"/applications/{live_app}/abort", {}).status_code == 403
        assert viewer.submit(f"/jobs/{JOB}/stop", {}).status_code == 403
        assert viewer.submit(f"/jobs/{JOB}/resume", {}).status_code == 403
        refused = viewer.submit(f"/jobs/{JOB}/delete", {})
        assert refused.status_code == 403
        assert "needs the DELETE permission on resource bundle" in refused.text
    assert stage.api.get(f"/api/v1/jobs/{JOB}").status_code == 200


def test_new_streaming_job_needs_create_spark_job(stage: Stage, browser: Browser) -> None:
    admin_page = read(browser.page("/jobs").text)
    assert admin_page.find("a", "New streaming job", href="/jobs/new")

    add_user(stage, "author", domain=[DomainPermission.CREATE_JOB])
    add_user(stage, "reader")
    for name, expected in (("author", None), ("reader", NEEDS_CREATE)):
        person = signed_in(stage, name)
        with closing(person.client):
            page = read(person.page("/jobs").text)
            if expected:
                refused_button(page, "New streaming job", expected)
                assert not page.find("a", "New streaming job")
            else:
                assert page.find("a", "New streaming job", href="/jobs/new")
