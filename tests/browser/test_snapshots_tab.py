"""The Snapshots tab and Suspend in a real browser, with the server's supervisor running a real
spark-submit driver: Take snapshot is enabled once the application runs (the page refreshes it
with htmx), asks for an optional name and the snapshot turns Ready in its row; Suspend asks
first and the application ends Suspended with an aligned snapshot; a snapshot's Start from it
opens Run from… with it chosen; Delete asks first."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import SPARK_WAIT_MS, application_state, badge, manifest, tab

pytestmark = [pytest.mark.browser, pytest.mark.spark, pytest.mark.snapshots]


@pytest.mark.timeout(900)
def test_take_a_snapshot_suspend_and_delete_from_the_job_page(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    name = "browser-snapshots"
    created = server_api.put(f"/api/v1/jobs/{name}", json=manifest(name, server.work / name))
    assert created.status_code == 201, created.text
    page.goto(f"/jobs/{name}")
    tab(page, "Snapshots").click()
    expect(page).to_have_url(re.compile(r"\?tab=snapshots$"))
    panel = page.locator("#panel-snapshots")
    expect(panel).to_contain_text("No snapshots yet.")
    take = panel.get_by_role("button", name="Take snapshot", exact=True)
    expect(take).to_be_disabled()
    expect(take).to_have_attribute("title", re.compile("while the job's application is running"))
    expect(page.get_by_role("button", name="Suspend", exact=True)).to_be_disabled()

    page.get_by_role("button", name="Run", exact=True).click()
    expect(badge(page.locator("h1"), "Running")).to_be_visible(timeout=SPARK_WAIT_MS)
    # Once it reports rows, its output has committed a batch the snapshot can say it is at.
    expect(page.locator('#applications-rows [data-cell="input-rate"]').first).to_have_text(
        re.compile(r"\d"), timeout=SPARK_WAIT_MS
    )
    tab(page, "Snapshots").click()
    # No reload: Take snapshot and Suspend come enabled with the page's refresh.
    expect(take).to_be_enabled(timeout=SPARK_WAIT_MS)
    expect(page.get_by_role("button", name="Suspend", exact=True)).to_be_enabled()
    application_id = server_api.get(f"/api/v1/jobs/{name}/applications").json()["items"][0]["id"]

    take.click()
    dialog = page.get_by_role("dialog", name="Take a snapshot")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Name").fill("before-change")
    screenshot(page, "job-snapshot-take")
    dialog.get_by_role("button", name="Take snapshot").click()
    expect(page).to_have_url(re.compile(r"\?tab=snapshots$"))
    expect(page.locator("main p.notice")).to_contain_text("Snapshot before-change asked for")
    row = page.locator('#snapshot-rows tr[data-snapshot="before-change"]')
    expect(badge(row, "Ready")).to_be_visible(timeout=SPARK_WAIT_MS)
    expect(row.locator('[data-cell="kind"]')).to_have_text("manual")
    expect(row.locator('[data-cell="positions"]')).to_contain_text(
        re.compile(r"even_ticks: parquet sink log batch \d+")
    )
    expect(row.locator('[data-cell="batches"]')).to_have_text(re.compile(r"^batch \d+$"))
    expect(row.get_by_role("link", name=f"{name}-1")).to_be_visible()
    screenshot(page, "job-snapshots-tab")

    page.get_by_role("button", name="Suspend", exact=True).click()
    suspend = page.get_by_role("dialog", name=f"Suspend {name}-1?")
    expect(suspend).to_contain_text("a snapshot of its checkpoint is taken")
    screenshot(page, "job-suspend-confirmation")
    suspend.get_by_role("button", name="Yes, suspend it").click()
    expect(badge(page.locator("h1"), "Suspended")).to_be_visible(timeout=SPARK_WAIT_MS)
    assert application_state(server_api, application_id) == "SUSPENDED"
    page.goto(f"/jobs/{name}?tab=snapshots")
    aligned = page.locator('#snapshot-rows tr[data-snapshot^="suspend-"]')
    expect(badge(aligned, "Ready")).to_be_visible()
    expect(page.get_by_role("button", name="Resume", exact=True)).to_be_enabled()

    # "Start from it" opens Run from… with that snapshot chosen; Run from… itself does not.
    row.get_by_role("button", name="Start from it").click()
    run_from = page.get_by_role("dialog", name="Run from…")
    expect(run_from.get_by_label("Start from")).to_have_value("before-change")
    expect(run_from.get_by_label("Allow replay")).not_to_be_checked()
    screenshot(page, "job-run-from-snapshot")
    run_from.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Run from…").click()
    expect(run_from.get_by_label("Start from")).to_have_value("")
    run_from.get_by_role("button", name="Cancel").click()
    expect(run_from).to_be_hidden()

    delete = page.get_by_role("button", name="Delete snapshot before-change")
    delete.click()
    confirm = page.get_by_role("dialog", name="Delete snapshot before-change?")
    expect(confirm).to_be_visible()
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_be_hidden()
    expect(row).to_be_visible()
    delete.click()
    screenshot(page, "job-snapshot-delete-confirmation")
    confirm.get_by_role("button", name="Yes, delete it").click()
    expect(page.locator("main p.notice")).to_have_text("Snapshot before-change deleted.")
    expect(row).to_have_count(0)
    expect(aligned).to_have_count(1)
    screenshot(page, "job-snapshot-deleted")
    server_api.post(f"/api/v1/applications/{application_id}/abort")
