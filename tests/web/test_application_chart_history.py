"""The application chart of a long life: the progress reports pruned from the store are drawn
from the buckets folded as they arrived, so "All" spans the whole life."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.web.conftest import Browser
from tests.web.test_application_page import page_of, started

T0 = datetime(2026, 1, 1, tzinfo=UTC)
REPORTS = 300
"""A report a minute for five hours: more than the 200 the store keeps one by one."""


def progress(sequence: int) -> dict[str, Any]:
    at = T0 + timedelta(minutes=sequence)
    return {
        "type": "progress",
        "sequence": sequence,
        "name": "q",
        "progress": {
            "timestamp": at.isoformat().replace("+00:00", "Z"),
            "batchId": sequence,
            "inputRowsPerSecond": 5.0,
            "processedRowsPerSecond": 6.0,
            "durationMs": {"triggerExecution": 700},
        },
    }


def test_all_of_a_long_life_starts_at_run_though_older_reports_were_pruned(
    browser: Browser,
) -> None:
    application_id = started(browser)
    stage = browser.stage
    stage.tick()
    stage.tick()
    accepted = stage.report(application_id, [progress(n) for n in range(1, REPORTS + 1)])
    assert accepted.json() == {"accepted": REPORTS}
    # The clock stays (a web session would expire): the chart ends at the newest report.

    whole = page_of(browser, f"/applications/{application_id}?range=all").one("#throughput")
    span_start = whole.all("[data-chart-span] time")[0]
    assert span_start.attr("datetime") == T0.isoformat()
    # Minutes 1-100 are buckets (one report each), 101-300 the reports kept.
    assert whole.attr("data-points") == str(REPORTS)
    assert whole.text("desc").startswith(
        "100 points (the means of 100 progress reports, older ones no longer kept one by one) "
        "and 200 progress reports from 00:01:00 to 05:00:00 UTC."
    )
    assert whole.text("[data-chart-note]").startswith("Until 01:41:00 UTC, each point is the mean")

    quarter = page_of(browser, f"/applications/{application_id}/chart?range=15m")
    assert quarter.attr("data-points", "#throughput") == "16"
    assert not quarter.has("[data-chart-note]")
