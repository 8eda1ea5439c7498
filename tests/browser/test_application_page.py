"""The application page in Chromium: the throughput chart's range picker over a real running
driver (and its htmx refresh), and the Events tab's paging, newest first, with a collapsed trace.
Screenshots go to ``tests/browser/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from streamjobs.store.db import Store
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

JOB = "chart-ranges"
NOTES = 70


@pytest.fixture(scope="module")
def running_application(server: Server) -> Iterator[str]:
    """A rate -> parquet application with a few progress reports; aborted afterwards."""
    with server.api() as api:
        created = api.put(f"/api/v1/jobs/{JOB}", json=manifest(JOB, server.work / JOB))
        assert created.status_code == 201, created.text
        started = api.post(f"/api/v1/jobs/{JOB}/run")
        assert started.status_code == 201, started.text
        application_id: str = started.json()["id"]
        progress = f"/api/v1/applications/{application_id}/progress?limit=500"
        wait_for(
            "three progress reports",
            lambda: (
                sum(item["type"] == "progress" for item in api.get(progress).json()["items"]) >= 3
            ),
        )
        yield application_id
        api.post(f"/api/v1/applications/{application_id}/abort")
        wait_for("the abort", lambda: application_state(api, application_id) == "ABORTED")


def test_the_chart_fits_the_application_s_life_and_its_range_can_be_picked(
    page: Page,
    running_application: str,
    server_api: httpx.Client,
    screenshot: Callable[[Page, str], Path],
) -> None:
    created = server_api.get(f"/api/v1/applications/{running_application}").json()["createdAt"]
    page.goto(f"/applications/{running_application}")
    chart = page.locator("#throughput")
    expect(chart).to_have_attribute("data-range", "all")
    expect(page.locator("svg#throughput-chart path.series-input")).to_be_attached()
    expect(page.get_by_role("link", name="All", exact=True)).to_have_attribute(
        "aria-current", "true"
    )
    first_points = int(chart.get_attribute("data-points") or 0)
    assert first_points >= 3
    # The whole life: the axis starts when the application was submitted (or a minute ago).
    start = page.locator("[data-chart-span] time").first.get_attribute("datetime")
    assert start is not None
    assert datetime.fromisoformat(start) <= datetime.fromisoformat(created)
    screenshot(page, "application-chart-all")

    # htmx refreshes the chart in place while the driver runs: more points, same range.
    expect(chart).not_to_have_attribute("data-points", str(first_points), timeout=SPARK_WAIT_MS)
    expect(chart).to_have_attribute("data-range", "all")

    page.get_by_role("link", name="15 min", exact=True).click()
    expect(chart).to_have_attribute("data-range", "15m")
    expect(page).to_have_url(re.compile(r"\?range=15m$"))
    expect(page.get_by_role("link", name="15 min", exact=True)).to_have_attribute(
        "aria-current", "true"
    )
    expect(page.get_by_role("link", name="All", exact=True)).not_to_have_attribute(
        "aria-current", "true"
    )
    quarter_start = page.locator("[data-chart-span] time").first.get_attribute("datetime")
    assert quarter_start is not None
    assert datetime.fromisoformat(quarter_start) < datetime.fromisoformat(start)
    # A poll keeps the picked range.
    expect(chart).to_have_attribute("data-range", "15m")
    screenshot(page, "application-chart-15-min")

    page.get_by_role("link", name="6 h", exact=True).click()
    expect(chart).to_have_attribute("data-range", "6h")
    page.reload()
    expect(chart).to_have_attribute("data-range", "6h")
    page.get_by_role("link", name="All", exact=True).click()
    expect(chart).to_have_attribute("data-range", "all")
    expect(page).to_have_url(re.compile(r"\?range=all$"))


@pytest.fixture(scope="module")
def noted_application(server: Server, running_application: str) -> str:
    """The running application with ``NOTES`` more events written to its store, the newest with
    a stack trace."""
    store = Store.open(server.env["STREAMJOBS_DATABASE_URL"])
    with store.transaction() as repos:
        for number in range(NOTES):
            message = f"note {number}"
            if number == NOTES - 1:
                message += '\nTraceback (most recent call last):\n  File "job.py"\nValueError: x'
            repos.applications.add_event(
                running_application, at=datetime.now(UTC), kind="note", message=message
            )
    return running_application


def test_events_are_newest_first_and_paged_with_traces_collapsed(
    page: Page, noted_application: str, screenshot: Callable[[Page, str], Path]
) -> None:
    page.goto(f"/applications/{noted_application}")
    tab(page, "Events").click()
    rows = page.locator("#events-body tr[data-event]")
    expect(rows).to_have_count(50)
    newest = rows.first
    expect(newest.locator(".headline")).to_have_text(f"note {NOTES - 1}")
    trace = newest.locator("details.trace")
    expect(trace.locator("pre")).not_to_be_visible()
    trace.locator("summary").click()
    expect(trace.locator("pre")).to_be_visible()
    expect(trace.locator("pre")).to_contain_text("ValueError: x")
    screenshot(page, "application-events-newest-first")

    page.get_by_role("button", name="Older events").click()
    expect(rows.filter(has_text="note 0")).to_have_count(1)
    expect(page.locator("#events-body .event-kind", has_text="run-requested")).to_have_count(1)
    expect(page.get_by_role("button", name="Older events")).to_have_count(0)
    headlines = rows.locator(".headline").all_inner_texts()
    notes = [int(text.split()[1]) for text in headlines if text.startswith("note ")]
    assert notes == sorted(notes, reverse=True)
    assert len(notes) == NOTES
    screenshot(page, "application-events-all-pages")


def test_abort_from_the_page_settles_it_without_a_reload(
    page: Page, noted_application: str, screenshot: Callable[[Page, str], Path]
) -> None:
    page.goto(f"/applications/{noted_application}")
    page.evaluate("() => { window.notReloaded = true; }")
    page.get_by_role("button", name="Abort app").click()
    page.get_by_role("button", name="Yes, abort it").click()
    expect(badge(page, "Aborted")).to_be_visible(timeout=SPARK_WAIT_MS)
    expect(page.locator("#abort-open")).to_be_disabled()
    expect(page.locator("[data-chart-now]")).to_contain_text("Ended: rows/s are shown while")
    expect(page.locator("#app-figures")).not_to_have_attribute("hx-trigger", re.compile("."))
    expect(page.locator("#throughput")).not_to_have_attribute(
        "hx-trigger", re.compile("."), timeout=SPARK_WAIT_MS
    )
    tab(page, "Events").click()
    aborted = page.locator(
        "#events-body tr[data-event]", has=page.locator(".event-kind", has_text="aborted")
    )
    expect(aborted).to_have_attribute("data-level", "info", timeout=SPARK_WAIT_MS)
    assert page.evaluate("() => window.notReloaded") is True
    screenshot(page, "application-aborted-events")
