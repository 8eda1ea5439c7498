"""Stop, Resume and the Details tab of a job's page in a real browser, with the server's supervisor
running real spark-submit drivers: the page refreshes its rows (htmx) as the application turns
Running, Stop asks first and the application ends Stopped; a job that suspends on failure is
resumed from its page; the Details tab shows the whole spec with the SQL highlighted."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import (
    SPARK_WAIT_MS,
    application_state,
    badge,
    manifest,
    tab,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.spark]


def _created(api: httpx.Client, job: dict[str, Any]) -> None:
    name = job["metadata"]["name"]
    created = api.put(f"/api/v1/jobs/{name}", json=job)
    assert created.status_code == 201, created.text


def _live_row(page: Page, name: str) -> Any:
    link = page.get_by_role("link", name=name, exact=True)
    return page.get_by_role("row").filter(has=link)


@pytest.mark.timeout(600)
def test_stop_asks_first_and_the_application_ends_stopped(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    name = "browser-stop"
    _created(server_api, manifest(name, server.work / name))
    page.goto(f"/jobs/{name}")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_disabled()
    page.get_by_role("button", name="Run", exact=True).click()

    # No reload from here on: the rows come from the server while the application is active.
    row = _live_row(page, f"{name}-1")
    expect(badge(row, "Running")).to_be_visible(timeout=SPARK_WAIT_MS)
    expect(badge(page.locator("h1"), "Running")).to_be_visible()
    expect(row.locator('[data-cell="input-rate"]')).to_have_text(
        re.compile(r"\d"), timeout=SPARK_WAIT_MS
    )
    application_id = server_api.get(f"/api/v1/jobs/{name}/applications").json()["items"][0]["id"]

    page.get_by_role("button", name="Stop", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Stop {name}-1?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("finishes the micro-batch in flight")
    screenshot(page, "job-stop-confirmation")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert application_state(server_api, application_id) == "RUNNING"

    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("button", name="Yes, stop it").click()
    expect(badge(_live_row(page, f"{name}-1"), "Stopped")).to_be_visible(timeout=SPARK_WAIT_MS)
    assert application_state(server_api, application_id) == "STOPPED"
    row = _live_row(page, f"{name}-1")
    expect(row.locator('[data-cell="input-rate"]')).to_have_text("")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_disabled()
    expect(page.get_by_role("button", name="Stop", exact=True)).to_have_attribute(
        "title", "The job has no live application to stop"
    )
    screenshot(page, "job-stopped")


@pytest.mark.timeout(900)
def test_a_suspended_application_is_resumed_from_the_job_page(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    name = "browser-resume"
    job = manifest(name, server.work / name)
    # It fails as soon as the rate source passes 3: the query dies and the job suspends.
    job["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] = (
        "SELECT timestamp, value, assert_true(value < 3) AS checked FROM ticks"
    )
    job["spec"]["processing"] = {"suspendOnFailure": True}
    _created(server_api, job)
    started = server_api.post(f"/api/v1/jobs/{name}/run")
    assert started.status_code == 201, started.text
    application_id = started.json()["id"]
    wait_for(
        "the application to suspend",
        lambda: application_state(server_api, application_id) == "SUSPENDED",
    )

    page.goto(f"/jobs/{name}")
    row = _live_row(page, f"{name}-1")
    expect(badge(row, "Suspended")).to_be_visible()
    expect(page.get_by_role("button", name="Resume", exact=True)).to_be_enabled()
    page.get_by_role("button", name="Resume", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Resume {name}-1?")
    expect(dialog).to_contain_text("starts again from its checkpoint")
    screenshot(page, "job-resume-confirmation")
    dialog.get_by_role("button", name="Yes, resume it").click()

    expect(page).to_have_url(f"{server.url}/jobs/{name}")
    attempts = f"/api/v1/applications/{application_id}"
    wait_for(
        "a second attempt after Resume",
        lambda: len(server_api.get(attempts).json()["attempts"]) >= 2,
    )
    events = server_api.get(f"{attempts}/events").json()["items"]
    assert any("resumed by admin" in event["message"] for event in events)
    # It fails again the same way, and the page shows it suspended once more.
    expect(badge(_live_row(page, f"{name}-1"), "Suspended")).to_be_visible(timeout=SPARK_WAIT_MS)
    screenshot(page, "job-resumed-and-suspended-again")


def test_the_details_tab_shows_the_whole_spec(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    name = "browser-details"
    job = manifest(name, server.work / name)
    job["spec"]["restartPolicy"] = {"type": "OnFailure", "onFailureRetries": 3}
    job["spec"]["configuration"] = {
        "sparkConf": {"spark.sql.shuffle.partitions": "4"},
        "sparkConfSecrets": {"spark.hadoop.fs.s3a.secret.key": "s3-secret"},
        "envSecrets": {"API_KEY": "payments-api-key"},
    }
    job["spec"]["dependencies"] = {"packages": ["org.example:lib_2.13:1.0.0"]}
    _created(server_api, job)
    page.goto(f"/jobs/{name}")
    tab(page, "Details").click()
    expect(page).to_have_url(re.compile(r"\?tab=details$"))
    panel = page.locator("#panel-details")
    expect(panel).to_be_visible()

    sql = panel.get_by_label("SQL of even_ticks")
    expect(sql).to_have_text("SELECT timestamp, value FROM ticks WHERE value % 2 = 0")
    keywords = sql.locator(".sql-keyword")
    expect(keywords).to_have_text(["SELECT", "FROM", "WHERE"])
    assert keywords.first.evaluate("e => getComputedStyle(e).fontWeight") == "600"
    expect(panel.get_by_role("heading", name="Restart policy")).to_be_visible()
    expect(panel).to_contain_text("OnFailure")
    expect(panel).to_contain_text("3 retries, 5s apart")
    spark = panel.get_by_role("table", name="Spark settings")
    expect(
        spark.get_by_role("row", name=re.compile("spark.sql.shuffle.partitions"))
    ).to_contain_text("4")
    expect(spark.get_by_role("row", name=re.compile("secret.key"))).to_contain_text(
        "secret s3-secret"
    )
    expect(panel.get_by_role("table", name="Environment variables")).to_contain_text(
        "secret payments-api-key"
    )
    expect(panel).to_contain_text("org.example:lib_2.13:1.0.0")
    screenshot(page, "job-details-spec")

    # The tab is kept in the address: a reload shows Details again.
    page.reload()
    expect(page.locator("#panel-details")).to_be_visible()
    expect(page.locator("#panel-applications")).to_be_hidden()
