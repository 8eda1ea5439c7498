"""The parts of the jobs list and of a job's page that htmx refreshes, rendered by the server:
rows/s of applications whose driver processes rows (blank once they end, in both tables), the
job page's live part (asked for again only while an application is active, every part swapped
out of band, the filters applied), and the jobs list's rows (each swapped where it stands,
hidden when the filters leave it out)."""

from __future__ import annotations

import httpx

from tests.factories import pipeline_manifest
from tests.web.conftest import Browser
from tests.web.html import Node, parse
from tests.web.test_job_detail import make_running, run_through_the_api, settle


def swapped(response: httpx.Response) -> Node:
    """A refreshed part as htmx reads it: the content of its ``<template>`` wrappers (where table
    rows survive HTML parsing) in their place."""
    document = parse(response)
    for template in document.tag.find_all("template"):
        template.unwrap()
    return parse(str(document.tag))  # parsed again: text read inside a template counts as text


OUT_OF_BAND = ["#job-status", "#job-live-actions", "#applications-rows", "#applications-summary"]


def reporting(browser: Browser) -> str:
    """A RUNNING application of ``ticks`` that reported rates once; its id."""
    application_id = str(run_through_the_api(browser)["id"])
    make_running(browser, application_id)
    progress = {
        "type": "progress",
        "sequence": 1,
        "name": "q",
        "progress": {
            "timestamp": "2026-01-01T00:00:01.000Z",
            "batchId": 1,
            "inputRowsPerSecond": 1234.5,
            "processedRowsPerSecond": 20.0,
            "durationMs": {"triggerExecution": 400},
        },
    }
    assert browser.stage.report(application_id, [progress]).json() == {"accepted": 1}
    return application_id


def rates_in_applications(document: Node, application_id: str) -> tuple[str, str]:
    row = document.one(f'tr[data-id="{application_id}"]')
    return row.text('[data-cell="input-rate"]'), row.text('[data-cell="processed-rate"]')


def rates_in_jobs_list(document: Node, job: str) -> tuple[str, str]:
    row = document.one(f'tr[data-job="{job}"]')
    return row.text('[data-cell="input"]'), row.text('[data-cell="processed"]')


def test_rates_show_while_the_driver_runs_and_are_blank_once_it_ended(browser: Browser) -> None:
    application_id = reporting(browser)
    page = parse(browser.page("/jobs/ticks"))
    assert page.texts("#applications-table thead th")[4:6] == ["Input rows/s", "Processed rows/s"]
    assert rates_in_applications(page, application_id) == ("1,234.5", "20.0")
    assert rates_in_jobs_list(parse(browser.page("/jobs")), "ticks") == ("1,234.5", "20.0")
    fragment = swapped(browser.page("/jobs?fragment=rows"))
    assert rates_in_jobs_list(fragment, "ticks") == ("1,234.5", "20.0")

    aborted = browser.submit(f"/applications/{application_id}/abort", {})
    assert aborted.status_code == 303
    settle(browser)
    ended = parse(browser.page("/jobs/ticks"))
    assert ended.text(f'tr[data-id="{application_id}"] [data-cell="state"] .badge') == "Aborted"
    assert rates_in_applications(ended, application_id) == ("", "")
    assert rates_in_jobs_list(parse(browser.page("/jobs")), "ticks") == ("", "")
    assert rates_in_jobs_list(swapped(browser.page("/jobs?fragment=rows")), "ticks") == ("", "")


def test_the_live_part_is_asked_for_while_an_application_is_active(browser: Browser) -> None:
    idle = parse(browser.page("/jobs/ticks"))
    assert not idle.one("#job-poller").has_attr("hx-get")

    application_id = str(run_through_the_api(browser)["id"])
    page = parse(browser.page("/jobs/ticks"))
    poller = page.one("#job-poller")
    assert poller.attr("hx-get") == "/jobs/ticks/live"
    assert poller.attr("hx-include") == "#applications-filters"
    assert (poller.attr("hx-trigger") or "").startswith("every 5s [")
    assert page.attr("hx-get", "#applications-filters") == "/jobs/ticks/live"

    live = browser.page("/jobs/ticks/live")
    assert live.status_code == 200
    part = swapped(live)
    assert not part.has("html, header, #panel-details")
    assert part.one("#job-poller").attr("hx-get") == "/jobs/ticks/live"
    for selector in OUT_OF_BAND:
        assert part.attr("hx-swap-oob", selector) == "true", selector
    assert part.text("#job-status") == "Starting"
    assert part.has(f'#applications-rows tr[data-id="{application_id}"]')
    assert part.text("#applications-summary") == "1 of 1 applications shown"

    browser.submit(f"/applications/{application_id}/abort", {})
    settle(browser)
    ended = swapped(browser.page("/jobs/ticks/live"))
    assert not ended.one("#job-poller").has_attr("hx-get")
    assert ended.text("#job-status") == "Aborted"


def test_the_live_part_applies_the_filters(browser: Browser) -> None:
    first = str(run_through_the_api(browser)["id"])
    browser.submit(f"/applications/{first}/abort", {})
    settle(browser)
    second = str(run_through_the_api(browser)["id"])

    part = swapped(browser.page("/jobs/ticks/live?status=aborted&runAs=&tag="))
    assert not part.one(f'tr[data-id="{first}"]').has_attr("hidden")
    assert part.one(f'tr[data-id="{second}"]').has_attr("hidden")
    assert part.text("#applications-summary") == "1 of 2 applications shown"
    assert browser.page("/jobs/ticks/live?status=sideways").status_code == 422
    assert browser.page("/jobs/ticks/live?tag=%3D").status_code == 422


def test_the_jobs_list_rows_come_again_each_to_swap_in_place(browser: Browser) -> None:
    other = pipeline_manifest("other")
    other["metadata"]["tags"] = {"team": "a"}
    browser.stage.api.put("/api/v1/jobs/other", json=other).raise_for_status()
    page = parse(browser.page("/jobs"))
    assert page.text('#status option[value="PENDING_RERUN"]') == "Pending Rerun"
    poller = page.one("#jobs-poller")
    assert poller.attr("hx-get") == "/jobs?fragment=rows"
    assert poller.attr("hx-include") == "#jobs-filters"
    assert poller.attr("hx-swap") == "none"

    rows = swapped(browser.page("/jobs?fragment=rows&tag=team%3Da"))
    assert not rows.has("html, header, table")
    by_job = {row.attr("data-job"): row for row in rows.all("tr")}
    assert set(by_job) == {"ticks", "other"}
    for row in by_job.values():
        assert row.attr("hx-swap-oob") == "true"
        assert (row.attr("id") or "").startswith("job-")
    assert by_job["ticks"].has_attr("hidden")
    assert not by_job["other"].has_attr("hidden")
    searched = swapped(browser.page("/jobs?fragment=rows&search=TIC"))
    assert not searched.one('tr[data-job="ticks"]').has_attr("hidden")
    assert searched.one('tr[data-job="other"]').has_attr("hidden")
    assert browser.page("/jobs?fragment=table").status_code == 422
    # A row keeps its id from the page to the fragment, so htmx finds where to swap it.
    assert page.attr("id", 'tr[data-job="ticks"]') == searched.attr("id", 'tr[data-job="ticks"]')
