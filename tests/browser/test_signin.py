"""Sign in in a real browser, and the rule every page follows: without a session, Sign in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server, sign_in

pytestmark = pytest.mark.browser

# Every page of the UI; the job and the application need not exist: the session is checked first.
PAGES = [
    "/jobs",
    "/jobs/new",
    "/jobs/new/yaml",
    "/jobs/some-job",
    "/jobs/some-job/configure",
    "/jobs/some-job/yaml",
    "/jobs/some-job/template",
    "/applications/some-application",
    "/settings/tokens",
    "/settings/secrets",
]


def test_a_wrong_password_shows_the_error_and_the_right_one_lands_on_the_jobs(
    anonymous_page: Page, server: Server, screenshot: Callable[[Page, str], Path]
) -> None:
    sign_in(anonymous_page, "admin", "not-the-password")
    expect(anonymous_page.get_by_role("alert")).to_contain_text(
        "the user name or the password is wrong"
    )
    expect(anonymous_page.get_by_label("User name")).to_have_value("admin")
    screenshot(anonymous_page, "signin-error")

    anonymous_page.get_by_label("Password").fill(server.password)
    anonymous_page.get_by_role("button", name="Sign in").click()
    expect(anonymous_page).to_have_url(f"{server.url}/jobs")
    expect(anonymous_page.get_by_role("heading", name="Streaming jobs")).to_be_visible()


def test_the_sign_in_page(anonymous_page: Page, screenshot: Callable[[Page, str], Path]) -> None:
    anonymous_page.goto("/signin")
    expect(anonymous_page.get_by_role("button", name="Sign in")).to_be_visible()
    screenshot(anonymous_page, "signin")


@pytest.mark.parametrize("path", PAGES)
def test_the_unauthenticated_are_sent_to_sign_in(
    anonymous_page: Page, server: Server, path: str
) -> None:
    anonymous_page.goto(path)
    expect(anonymous_page).to_have_url(f"{server.url}/signin?next={quote(path, safe='')}")
    expect(anonymous_page.get_by_role("button", name="Sign in")).to_be_visible()


def test_sign_in_returns_to_the_page_asked_for(anonymous_page: Page, server: Server) -> None:
    anonymous_page.goto("/settings/tokens")
    anonymous_page.get_by_label("User name").fill("admin")
    anonymous_page.get_by_label("Password").fill(server.password)
    anonymous_page.get_by_role("button", name="Sign in").click()
    expect(anonymous_page).to_have_url(f"{server.url}/settings/tokens")


def test_sign_out_ends_the_session(anonymous_page: Page, server: Server) -> None:
    # Its own sign-in: the shared session of the other tests must outlive this sign-out.
    sign_in(anonymous_page, "admin", server.password)
    expect(anonymous_page).to_have_url(f"{server.url}/jobs")
    anonymous_page.get_by_role("button", name="Sign out").click()
    expect(anonymous_page).to_have_url(f"{server.url}/signin")
    anonymous_page.goto("/jobs")
    expect(anonymous_page).to_have_url(f"{server.url}/signin?next=%2Fjobs")
