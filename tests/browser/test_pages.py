"""Every page once, signed in: it loads, every form control has a label, nothing is fetched from
outside the server (the request guard of every browser test), and a screenshot is saved under
``tests/browser/screenshots/`` for a person to look at."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import RequestGuard, Server
from tests.browser.helpers import application_state, manifest, tab, unlabelled_controls, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.spark]

JOB = "page-tour"

# (screenshot name, path, the tab to click there or None); {app} is the tour's application.
PAGES = [
    ("jobs", "/jobs", None),
    ("job-form-new", "/jobs/new", None),
    ("job-yaml-new", "/jobs/new/yaml", None),
    ("job-detail-applications", f"/jobs/{JOB}", "Applications"),
    ("job-detail-details", f"/jobs/{JOB}", "Details"),
    ("job-form-configure", f"/jobs/{JOB}/configure", None),
    ("job-yaml", f"/jobs/{JOB}/yaml", None),
    ("job-template", f"/jobs/{JOB}/template", None),
    ("application-details", "/applications/{app}", "Details"),
    ("application-logs", "/applications/{app}", "Logs"),
    ("application-events", "/applications/{app}", "Events"),
    ("application-template", "/applications/{app}", "Template JSON"),
    ("tokens", "/settings/tokens", None),
    ("secrets", "/settings/secrets", None),
]


@pytest.fixture(scope="module")
def tour_application(server: Server) -> Iterator[str]:
    """A job with one application, aborted once its driver was submitted (so it has a log): its
    pages need no more."""
    with server.api() as api:
        created = api.put(f"/api/v1/jobs/{JOB}", json=manifest(JOB, server.work / JOB))
        assert created.status_code == 201, created.text
        started = api.post(f"/api/v1/jobs/{JOB}/run")
        assert started.status_code == 201, started.text
        application_id: str = started.json()["id"]
        path = f"/api/v1/applications/{application_id}"
        wait_for("the tour's driver to be submitted", lambda: api.get(path).json()["attempts"])
        assert api.post(f"{path}/abort").status_code == 202
        wait_for(
            "the tour's application to abort",
            lambda: application_state(api, application_id) == "ABORTED",
        )
        yield application_id


@pytest.mark.parametrize(("name", "path", "tab_name"), PAGES, ids=[page[0] for page in PAGES])
def test_every_page_loads_with_labelled_controls(
    page: Page,
    tour_application: str,
    screenshot: Callable[[Page, str], Path],
    name: str,
    path: str,
    tab_name: str | None,
) -> None:
    response = page.goto(path.format(app=tour_application))
    assert response is not None
    assert response.ok, f"{path}: {response.status}"
    expect(page.locator("main h1").first).to_be_visible()
    if tab_name is not None:
        tab(page, tab_name).click()
    assert unlabelled_controls(page) == [], f"{name}: form controls without a label"
    screenshot(page, name)


def test_the_job_form_names_every_field_of_the_contract(page: Page) -> None:
    page.goto("/jobs/new")
    for label in [
        "Name",
        "Description",
        "Resource bundle",
        "Namespace",
        "Run as user",
        "Application type",
        "Main class",
        "Main application file",
        "Pipeline (YAML)",
        "Deployment",
        "Driver node",
        "Restart policy",
        "Processing guarantee",
    ]:
        expect(page.get_by_label(label, exact=True), label).to_have_count(1)
    expect(page.get_by_role("button", name="Create")).to_be_visible()


def test_the_configure_form_saves(page: Page, tour_application: str) -> None:
    page.goto(f"/jobs/{JOB}/configure")
    expect(page.get_by_label("Name", exact=True)).to_have_value(JOB)
    expect(page.get_by_role("button", name="Save")).to_be_visible()


def test_the_job_page_has_the_contracts_actions(page: Page, tour_application: str) -> None:
    page.goto(f"/jobs/{JOB}")
    for link in ["Configure", "Duplicate", "Template JSON"]:
        expect(page.get_by_role("link", name=link, exact=True), link).to_be_visible()
    for button in ["Delete", "API operations", "Run"]:
        expect(page.get_by_role("button", name=button, exact=True), button).to_be_visible()
    page.get_by_role("button", name="Delete", exact=True).click()
    expect(page.get_by_role("button", name="Yes, delete it")).to_be_visible()


def test_the_application_page_has_the_contracts_figures(
    page: Page, tour_application: str, server_api: httpx.Client
) -> None:
    page.goto(f"/applications/{tour_application}")
    for label in [
        "Completed tasks",
        "Failed tasks",
        "Task time",
        "Shuffle read",
        "Shuffle write",
        "Memory used",
        "Disk used",
    ]:
        expect(page.get_by_text(label, exact=True).first, label).to_be_visible()
    expect(page.locator("svg#throughput-chart")).to_be_attached()
    tab(page, "Logs").click()
    expect(page.get_by_label("Instance")).to_be_attached()
    expect(page.get_by_role("link", name="Download")).to_be_attached()


def test_the_request_guard_sees_and_stops_a_request_outside_the_server(
    chromium: Browser, server: Server
) -> None:
    """The guard every test has is not vacuous: a fetch elsewhere is recorded and refused."""
    context = chromium.new_context(base_url=server.url)
    try:
        guard = RequestGuard(server_host=server.host)
        guard.watch(context)
        outsider = context.new_page()
        outsider.goto("/signin")
        reached = outsider.evaluate(
            "() => fetch('https://example.com/tracker.js').then(() => true, () => false)"
        )
        assert reached is False
        assert guard.outside() == ["https://example.com/tracker.js"]
        assert f"{server.url}/static/app.css" in guard.requests
    finally:
        context.close()
