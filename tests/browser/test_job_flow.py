"""The main flow in a real browser, with the server's supervisor running a real spark-submit
driver: create a rate -> parquet job through the form (a wrong field first), Run it, watch its
application turn Running with figures and a chart, read its driver log, Abort it, Duplicate the
job and Delete the copy."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import (
    DIGIT,
    SPARK_WAIT_MS,
    application_links,
    application_state,
    badge,
    field_error,
    metric_card,
    pipeline_yaml,
    tab,
)

pytestmark = [pytest.mark.browser, pytest.mark.spark]

JOB = "browser-ticks"
COPY = "browser-ticks-copy"
CARDS = ["Completed tasks", "Failed tasks", "Task time", "Memory used"]


@pytest.mark.timeout(600)
def test_create_run_watch_abort_duplicate_delete(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    work = server.work / JOB

    # The jobs list leads to the form; a wrong triggerDuration is refused next to its field.
    screenshot(page, "flow-jobs")
    page.get_by_role("link", name="New streaming job").click()
    expect(page).to_have_url(f"{server.url}/jobs/new")
    page.get_by_label("Name", exact=True).fill(JOB)
    page.get_by_label("Description").fill("Ticks from the browser test")
    editor = page.get_by_label("Pipeline (YAML)")
    editor.fill(pipeline_yaml(work, trigger="1 secs"))
    screenshot(page, "flow-job-new")
    page.get_by_role("button", name="Create").click()

    editor = page.get_by_label("Pipeline (YAML)")
    expect(editor).to_have_attribute("aria-invalid", "true")
    expect(field_error(editor)).to_contain_text("not a valid Spark interval")
    expect(page.get_by_label("Name", exact=True)).to_have_value(JOB)
    screenshot(page, "flow-job-new-error")
    assert server_api.get(f"/api/v1/jobs/{JOB}").status_code == 404

    editor.fill(pipeline_yaml(work))
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(f"{server.url}/jobs/{JOB}")
    assert server_api.get(f"/api/v1/jobs/{JOB}").status_code == 200

    # Run: the application appears on the job's page; open it.
    page.get_by_role("button", name="Run", exact=True).click()
    expect(application_links(page).first).to_be_visible()
    screenshot(page, "flow-job-applications")
    application_links(page).first.click()
    expect(page).to_have_url(re.compile(rf"{re.escape(server.url)}/applications/[^/?#]+"))
    application_id = page.url.rsplit("/", 1)[1].split("?")[0]
    assert server_api.get(f"/api/v1/applications/{application_id}").json()["job"] == JOB

    # Running, with the metric cards' figures and the throughput chart filled in as it runs.
    expect(badge(page, "Running")).to_be_visible(timeout=SPARK_WAIT_MS)
    for label in CARDS:
        expect(metric_card(page, label)).to_contain_text(DIGIT, timeout=SPARK_WAIT_MS)
    lines = page.locator("svg#throughput-chart").locator("path[d*='L'], polyline[points*=',']")
    expect(lines.first).to_be_attached(timeout=SPARK_WAIT_MS)
    screenshot(page, "flow-application-running")

    # The driver's log, in the Logs tab.
    tab(page, "Logs").click()
    expect(page.get_by_label("Instance")).to_be_visible()
    expect(page.locator("pre.log")).to_contain_text(re.compile(r"\w+"), timeout=SPARK_WAIT_MS)
    expect(page.locator("pre.log")).not_to_have_text(re.compile(r"^\s*No logs yet\.\s*$"))
    expect(page.get_by_role("link", name="Download")).to_be_visible()
    screenshot(page, "flow-application-logs")

    # Abort app, through its confirmation.
    page.get_by_role("button", name="Abort app").click()
    confirm = page.get_by_role("button", name="Yes, abort it")
    expect(confirm).to_be_visible()
    screenshot(page, "flow-application-abort-confirmation")
    confirm.click()
    expect(badge(page, "Aborted")).to_be_visible(timeout=SPARK_WAIT_MS)
    assert application_state(server_api, application_id) == "ABORTED"
    screenshot(page, "flow-application-aborted")

    # Duplicate: the form comes prefilled; a copy writing the same output is refused, naming
    # the job that writes there; with its own output, Create makes the copy.
    page.goto(f"/jobs/{JOB}")
    page.get_by_role("link", name="Duplicate").click()
    expect(page.get_by_label("Pipeline (YAML)")).to_have_value(re.compile("format: rate"))
    expect(page.get_by_label("Pipeline (YAML)")).to_have_value(re.compile("1 second"))
    expect(page.get_by_label("Description")).to_have_value("Ticks from the browser test")
    screenshot(page, "flow-job-duplicate")
    page.get_by_label("Name", exact=True).fill(COPY)
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_text(f"job '{JOB}'").first).to_be_visible()
    screenshot(page, "flow-job-duplicate-same-output")
    page.get_by_label("Pipeline (YAML)").fill(pipeline_yaml(server.work / COPY))
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(f"{server.url}/jobs/{COPY}")
    copied = server_api.get(f"/api/v1/jobs/{COPY}").json()
    assert copied["spec"]["pipeline"]["inputs"][0]["format"] == "rate"

    # Delete the copy, through its confirmation.
    page.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("button", name="Yes, delete it")
    expect(confirm).to_be_visible()
    confirm.click()
    expect(page).to_have_url(re.compile(rf"{re.escape(server.url)}/jobs/?(\?.*)?$"))
    expect(page.get_by_role("link", name=JOB, exact=True)).to_be_visible()
    expect(page.get_by_role("link", name=COPY, exact=True)).to_have_count(0)
    assert server_api.get(f"/api/v1/jobs/{COPY}").status_code == 404
