"""The State tab in a real browser, over a real server: its supervisor runs a real spark-submit
driver of a watermarked windowed count, and the tab's reads of the checkpoint are real ``state``
tool runs (a sandboxed spark-submit against the live checkpoint, bound read-only). The tab loads
when shown, lists the aggregation's operator with its figures and the batches its state covers,
and previews its first keys and values in place."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import SPARK_WAIT_MS, manifest, tab

pytestmark = [pytest.mark.browser, pytest.mark.spark, pytest.mark.snapshots]

COUNTS = (
    "SELECT window(timestamp, '2 seconds') AS period, count(*) AS ticks FROM ticks "
    "GROUP BY window(timestamp, '2 seconds')"
)


def windowed_counts(name: str, work: Path) -> dict[str, Any]:
    """The browser tests' rate pipeline, counting ticks per two-second window (watermarked)."""
    job = manifest(name, work)
    pipeline = job["spec"]["pipeline"]
    pipeline["inputs"][0]["watermark"] = {"column": "timestamp", "delay": "1 second"}
    pipeline["steps"] = [{"sequence": [{"name": "counts", "sql": COUNTS}]}]
    pipeline["outputs"][0]["name"] = "counts"
    job["spec"]["configuration"] = {"sparkConf": {"spark.sql.shuffle.partitions": "2"}}
    return job


def wait_for_state(api: httpx.Client, application_id: str) -> None:
    """Until the driver's latest progress report has state rows and a watermark: its checkpoint
    holds state."""
    deadline = time.monotonic() + SPARK_WAIT_MS / 1000
    while time.monotonic() < deadline:
        items = api.get(f"/api/v1/applications/{application_id}/progress").json()["items"]
        reports = [item["event"]["progress"] for item in items if item["type"] == "progress"]
        if reports and _holds_state(reports[-1]):
            return
        time.sleep(1)
    raise AssertionError(f"{application_id} reported no state in {SPARK_WAIT_MS / 1000:.0f} s")


def _holds_state(progress: dict[str, Any]) -> bool:
    watermark = (progress.get("eventTime") or {}).get("watermark") or "1970"
    operators = progress.get("stateOperators") or []
    return not watermark.startswith("1970") and any(op.get("numRowsTotal") for op in operators)


@pytest.mark.timeout(900)
def test_the_state_tab_shows_the_operators_and_previews_the_state(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    name = "browser-state"
    created = server_api.put(f"/api/v1/jobs/{name}", json=windowed_counts(name, server.work / name))
    assert created.status_code == 201, created.text
    started = server_api.post(f"/api/v1/jobs/{name}/run")
    assert started.status_code == 201, started.text
    application_id = started.json()["id"]
    try:
        wait_for_state(server_api, application_id)

        page.goto(f"/jobs/{name}")
        tab(page, "State").click()
        panel = page.locator("#panel-state")
        expect(panel).to_be_visible()
        row = panel.locator('table.state-operators tbody tr[data-operator="0"]')
        expect(row).to_be_visible(timeout=SPARK_WAIT_MS)
        expect(panel.locator(".state-query h3")).to_have_text("Query counts")
        cells = row.locator("td")
        expect(cells.nth(1)).to_have_text("stateStoreSave")
        expect(cells.nth(2)).to_have_text("default")
        expect(cells.nth(3)).to_have_text("2")
        expect(cells.nth(9)).to_have_text(re.compile(r"^\s*\d+( \u2013 \d+)?\s*$"))
        expect(panel.locator(".state-query p.muted")).to_contain_text("Watermark: 20")
        expect(panel.locator("#state-problem")).to_have_count(0)
        screenshot(page, "job-state-tab")

        row.get_by_label("Rows").fill("3")
        row.get_by_role("button", name="Preview").click()
        preview = panel.locator("#state-preview-table")
        expect(preview).to_be_visible(timeout=SPARK_WAIT_MS)
        keys = preview.locator("tbody tr td:nth-child(2) code")
        expect(keys.first).to_contain_text('{"window": {"start": ')
        assert 1 <= keys.count() <= 3
        values = preview.locator("tbody tr td:nth-child(3) code")
        expect(values.first).to_have_text(re.compile(r'^\{"\w+": \d+\}$'))
        expect(page).to_have_url(f"{server.url}/jobs/{name}?tab=state")
        screenshot(page, "job-state-preview")
    finally:
        server_api.post(f"/api/v1/jobs/{name}/stop")
