"""The Create, Run and Abort flows with the keyboard alone: Tab (Shift+Tab) to reach a control,
typing into fields, Enter or Space to press buttons and follow links."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import (
    SPARK_WAIT_MS,
    application_state,
    badge,
    focused,
    manifest,
    pipeline_yaml,
    tab_to,
    type_into,
)

pytestmark = [pytest.mark.browser, pytest.mark.spark]
MENU_ITEMS = 5


def test_create_a_job_with_the_keyboard_alone(
    page: Page, server: Server, server_api: httpx.Client
) -> None:
    name = "keyboard-created"
    tab_to(page, page.get_by_role("link", name="New streaming job"))
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{server.url}/jobs/new")

    type_into(page, page.get_by_label("Name", exact=True), name)
    type_into(page, page.get_by_label("Pipeline (YAML)"), pipeline_yaml(server.work / name))
    tab_to(page, page.get_by_role("button", name="Create"))
    page.keyboard.press("Enter")

    expect(page).to_have_url(f"{server.url}/jobs/{name}")
    assert server_api.get(f"/api/v1/jobs/{name}").status_code == 200


def test_run_and_abort_with_the_keyboard_alone(
    page: Page, server: Server, server_api: httpx.Client
) -> None:
    """Run, then Abort app from the application's row menu; Run again, open the application and
    Abort app from its page."""
    name = "keyboard-run"
    created = server_api.put(f"/api/v1/jobs/{name}", json=manifest(name, server.work / name))
    assert created.status_code == 201, created.text
    page.goto(f"/jobs/{name}")
    run = page.get_by_role("button", name="Run", exact=True)

    tab_to(page, run)
    page.keyboard.press("Space")
    first = page.get_by_role("link", name=f"{name}-1", exact=True)
    expect(first).to_be_visible()
    row = page.get_by_role("row").filter(has=first)
    tab_to(page, row.get_by_role("button", name="Actions"))
    page.keyboard.press("Enter")
    # The menu opens on its first item (Stop app); the arrow keys move through it.
    abort_item = row.get_by_role("menuitem", name="Abort app")
    arrow_to(page, abort_item)
    page.keyboard.press("Enter")
    tab_to(page, page.get_by_role("button", name="Yes, abort it"))
    page.keyboard.press("Space")
    expect(badge(row, "Aborted")).to_be_visible(timeout=SPARK_WAIT_MS)
    first_id = _id_of(first.get_attribute("href"))
    assert application_state(server_api, first_id) == "ABORTED"

    tab_to(page, run, backwards=True)
    page.keyboard.press("Enter")
    second = page.get_by_role("link", name=f"{name}-2", exact=True)
    expect(second).to_be_visible()
    tab_to(page, second)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"{re.escape(server.url)}/applications/[^/?#]+$"))
    tab_to(page, page.get_by_role("button", name="Abort app"))
    page.keyboard.press("Enter")
    tab_to(page, page.get_by_role("button", name="Yes, abort it"))
    page.keyboard.press("Space")
    expect(badge(page, "Aborted")).to_be_visible(timeout=SPARK_WAIT_MS)
    assert application_state(server_api, _id_of(page.url)) == "ABORTED"


def arrow_to(page: Page, item: Locator) -> None:
    """Press ArrowDown in an open menu until ``item`` has the focus."""
    expect(item).to_be_visible()
    for _ in range(MENU_ITEMS):
        if focused(item):
            return
        page.keyboard.press("ArrowDown")
    raise AssertionError(f"ArrowDown never reached {item}")


def _id_of(url: str | None) -> str:
    assert url is not None
    return url.rstrip("/").rsplit("/", 1)[1].split("?")[0]
