"""Access control in a real browser: a button the person may not use is disabled and says why
(its tooltip and its accessible description), and the settings pages load with every control
labelled (a screenshot of each is saved for a person to look at)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Server, sign_in
from tests.browser.helpers import manifest, unlabelled_controls

pytestmark = [pytest.mark.browser]

BUNDLE = "browser-view"
JOB = "access-tour"
VIEWER = "browser-viewer"
PASSWORD = "viewer-password-5521"
NEEDS_RUN = f"Needs the RUN permission on resource bundle '{BUNDLE}'"

SETTINGS_PAGES = [
    ("settings-users", "/settings/users"),
    ("settings-bundles", "/settings/bundles"),
    ("settings-bundle", "/settings/bundles/default"),
    ("settings-node-types", "/settings/node-types"),
    ("settings-audit", "/settings/audit"),
]


@pytest.fixture(scope="module")
def viewer(server: Server) -> str:
    """A user holding only VIEW on a bundle with one job; their name."""
    with server.api() as api:
        root = (server.work / JOB).as_uri()
        _ok(api.post("/api/v1/bundles", json={"name": BUNDLE, "dataRoots": [root]}))
        job = manifest(JOB, server.work / JOB)
        job["spec"]["bundle"] = BUNDLE
        _ok(api.put(f"/api/v1/jobs/{JOB}", json=job))
        _ok(api.post("/api/v1/users", json={"name": VIEWER, "password": PASSWORD}))
        grants = {"grants": [{"subject": f"user:{VIEWER}", "permissions": ["VIEW"]}]}
        _ok(api.put(f"/api/v1/bundles/{BUNDLE}/grants", json=grants))
    return VIEWER


def _ok(response: httpx.Response) -> None:
    assert response.is_success, response.text


def test_a_disabled_run_button_says_which_permission_is_missing(
    context: BrowserContext,
    server: Server,
    viewer: str,
    screenshot: Callable[[Page, str], Path],
) -> None:
    page = context.new_page()
    sign_in(page, viewer, PASSWORD)
    expect(page).to_have_url(f"{server.url}/jobs")
    page.goto(f"/jobs/{JOB}")
    run = page.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_disabled()
    expect(run).to_have_attribute("title", NEEDS_RUN)
    expect(run).to_have_accessible_description(NEEDS_RUN)
    expect(page.get_by_role("button", name="Delete")).to_be_disabled()
    expect(page.get_by_role("link", name="Configure")).to_have_count(0)
    screenshot(page, "job-detail-view-only")
    page.goto("/jobs")
    expect(page.get_by_role("button", name="New streaming job")).to_be_disabled()


@pytest.mark.parametrize(("name", "path"), SETTINGS_PAGES, ids=[p[0] for p in SETTINGS_PAGES])
def test_the_settings_pages_load_with_labelled_controls(
    page: Page, screenshot: Callable[[Page, str], Path], name: str, path: str
) -> None:
    response = page.goto(path)
    assert response is not None
    assert response.ok, f"{path}: {response.status}"
    expect(page.locator("main h1").first).to_be_visible()
    assert unlabelled_controls(page) == [], f"{name}: form controls without a label"
    screenshot(page, name)
