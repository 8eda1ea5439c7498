"""The application page over HTTP: what it renders server-side for a running, a starting and an
aborted application, the partials htmx refreshes (status, chart, events), the Logs form without
script, and the 404 and sign-in rules."""

from __future__ import annotations

from pathlib import Path

import httpx

from streamjobs.launch.spark_ui import ExecutorFigures, ExecutorMetrics
from tests.factories import pipeline_manifest
from tests.web.conftest import Browser
from tests.web.html import Node, parse

MAIN_LABELS = [
    "Completed tasks",
    "Failed tasks",
    "Task time",
    "Shuffle read",
    "Shuffle write",
    "Memory used",
    "Disk used",
]
MORE_LABELS = [
    "Driver task time",
    "Input bytes",
    "RDD blocks",
    "GC time",
    "Total cores",
    "Bytes spilled",
]


def started(browser: Browser) -> str:
    """Run the ``ticks`` job from the browser session; the application stays in STARTING."""
    run = browser.client.post("/api/v1/jobs/ticks/run", headers={"X-CSRF-Token": browser.csrf})
    assert run.status_code == 201, run.text
    application_id: str = run.json()["id"]
    return application_id


def running(browser: Browser) -> str:
    """A RUNNING application of ``ticks`` with two progress reports and a driver log."""
    application_id = started(browser)
    stage = browser.stage
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    reports = [
        {
            "type": "progress",
            "sequence": sequence,
            "name": "q",
            "progress": {
                "timestamp": f"2026-01-01T00:00:0{sequence}.000Z",
                "batchId": sequence,
                "inputRowsPerSecond": 10.0 * sequence,
                "processedRowsPerSecond": 20.0 * sequence,
                "durationMs": {"triggerExecution": 400 * sequence},
            },
        }
        for sequence in (1, 2)
    ]
    assert stage.report(application_id, reports).json() == {"accepted": 2}
    log = Path(stage.launcher.drivers[-1].handle.directory) / "stderr.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    return application_id


def executor(identifier: str, *, active: bool = True, **figures: int) -> ExecutorMetrics:
    counts = dict.fromkeys(
        [
            "total_cores",
            "completed_tasks",
            "failed_tasks",
            "task_time_ms",
            "shuffle_read_bytes",
            "shuffle_write_bytes",
            "memory_used_bytes",
            "disk_used_bytes",
            "gc_time_ms",
            "rdd_blocks",
            "input_bytes",
            "memory_spilled_bytes",
            "disk_spilled_bytes",
        ],
        0,
    )
    counts.update(figures)
    return ExecutorMetrics(id=identifier, host="localhost", is_active=active, **counts)


def aborted(browser: Browser) -> str:
    application_id = running(browser)
    aborting = browser.client.post(
        f"/api/v1/applications/{application_id}/abort", headers={"X-CSRF-Token": browser.csrf}
    )
    assert aborting.status_code == 202
    browser.stage.tick()
    browser.stage.tick()
    return application_id


def page_of(browser: Browser, path: str) -> Node:
    response = browser.page(path)
    assert response.status_code == 200, response.text
    return parse(response)


def fact(page: Node, name: str) -> str:
    return page.text(f'[data-fact="{name}"]')


def test_a_running_application_shows_its_state_figures_facts_logs_and_template(
    browser: Browser,
) -> None:
    tagged = pipeline_manifest("ticks")
    tagged["metadata"]["tags"] = {"team": "payments"}
    browser.stage.api.put("/api/v1/jobs/ticks", json=tagged).raise_for_status()
    application_id = running(browser)
    figures = ExecutorFigures(
        spark_application_id="local-1",
        executors=(
            executor("driver", total_cores=2, completed_tasks=1200, task_time_ms=90_000),
            executor(
                "1", total_cores=4, completed_tasks=34, failed_tasks=2, shuffle_read_bytes=3 << 20
            ),
            executor("2", active=False, total_cores=4, disk_spilled_bytes=1536),
        ),
        running_executors=1,
    )
    with browser.stage.services.store.transaction() as repos:
        repos.applications.set_executor_figures(
            application_id, at=browser.stage.services.clock.now(), figures=figures.to_dict()
        )

    page = page_of(browser, f"/applications/{application_id}")

    assert page.text("h1 .app-name") == "ticks-1"
    assert page.attr("data-state", "h1 .badge") == "RUNNING"
    assert page.text("h1 .badge") == "Running"
    assert page.attr("href", "[data-job-link]") == "/jobs/ticks"
    assert page.text("#abort-open") == "Abort app"
    assert not page.one("#abort-open").has_attr("disabled")
    assert page.text("#abort-confirm") == "Yes, abort it"
    tabs = page.all('[role="tab"]')
    assert [tab.text().split(" 0 ")[0] for tab in tabs] == [
        "Details",
        "Logs",
        "Events",
        "Template JSON",
    ]
    for key in ("details", "logs", "events", "template"):
        assert page.has(f'[role="tabpanel"]#panel-{key}')
    assert page.texts(".metric .label") == MAIN_LABELS + MORE_LABELS
    assert page.text(".more-metrics summary") == "More"
    cards = {
        card.attr("data-metric"): card.text("[data-metric-value]") for card in page.all(".metric")
    }
    assert cards["completed_tasks"] == "1,234"
    assert cards["failed_tasks"] == "2"
    assert cards["task_time_ms"] == "1.5 min"
    assert cards["shuffle_read_bytes"] == "3.0 MiB"
    assert cards["driver_task_time_ms"] == "1.5 min"
    assert cards["total_cores"] == "6"
    assert cards["spilled_bytes"] == "1.5 KiB"
    assert fact(page, "state") == "Running"
    assert fact(page, "attempts") == "1 submission, 1 execution"
    assert fact(page, "triggeredBy") == "admin"
    assert fact(page, "namespace") == "default"
    assert page.texts('[data-fact="tags"] .tag') == ["team: payments"]
    assert fact(page, "duration") == "0s"
    assert not page.has('[data-fact="exitCode"]')
    assert not page.text("#error-summary")
    # The latest figures, and the live parts htmx refreshes every 5 s.
    assert page.text('[data-latest="inputRowsPerSecond"]') == "20.0"
    assert page.text('[data-latest="processedRowsPerSecond"]') == "40.0"
    assert page.text('[data-latest="batchDurationMs"]') == "800 ms"
    live = page.one("#app-figures")
    assert live.attr("hx-get") == f"/applications/{application_id}/status"
    assert live.attr("hx-trigger") == "every 5s, refresh-status from:body"
    assert page.attr("hx-trigger", "#throughput") == "every 5s"
    assert page.attr("hx-get", "#events-newer").endswith("/events?after=" + newest(page))
    # Logs: the driver instance, its last 500 lines, followed by default, and its download.
    assert page.attr("value", "#log-instance option[selected]") == "driver"
    log = page.text("#log-text")
    assert log.startswith("line 0 line 1")
    assert log.endswith("line 99")
    assert page.one("#log-follow").has_attr("checked")
    download = page.attr("href", "#log-download")
    assert download == f"/api/v1/applications/{application_id}/logs/download?instance=driver"
    # Events (newest first) and the template the application runs with.
    assert "driver-running" in page.texts("#events-body .event-kind")
    template = page.text("#template-json")
    assert template.startswith('{ "apiVersion"')
    assert '"checkpointLocation": "file://' in template


def newest(page: Node) -> str:
    return str(page.all("#events-body tr[data-event]")[0].attr("data-event"))


def test_the_page_reads_the_same_api_the_cli_does(browser: Browser) -> None:
    application_id = running(browser)
    progress = browser.client.get(f"/api/v1/applications/{application_id}/progress?limit=500")
    items = [item for item in progress.json()["items"] if item["type"] == "progress"]
    assert [item["event"]["progress"]["batchId"] for item in items] == [1, 2]
    assert browser.page("/static/application.js").status_code == 200
    assert browser.page("/static/application.css").status_code == 200
    htmx = browser.page("/static/htmx.min.js")
    assert htmx.status_code == 200
    assert htmx.text.startswith("/*! htmx 2.0.11")
    page = page_of(browser, f"/applications/{application_id}")
    assert page.attr("src", 'script[src="/static/htmx.min.js"]') == "/static/htmx.min.js"


def test_the_logs_form_works_without_script(browser: Browser) -> None:
    application_id = running(browser)
    path = f"/applications/{application_id}"

    tail = page_of(browser, f"{path}?tab=logs&instance=driver&attempt=&lines=3&start=&end=")
    assert not tail.one("#panel-logs").has_attr("hidden")
    assert tail.one("#panel-details").has_attr("hidden")
    assert tail.one("#log-text").tag.get_text() == "line 97\nline 98\nline 99\n"
    assert tail.attr("value", "#log-lines") == "3"

    ranged = page_of(browser, f"{path}?tab=logs&start=0&end=7")
    assert ranged.one("#log-text").tag.get_text() == "line 0\n"
    assert "bytes 0\u20137 of" in ranged.text("[data-log-status]")

    assert "start: give a whole number" in page_of(browser, f"{path}?tab=logs&start=%C2%B2").text(
        "[data-log-status]"
    )
    wrong = page_of(browser, f"{path}?tab=logs&lines=many")
    assert wrong.text("[data-log-status]") == "lines: give a whole number, not 'many'"

    unknown = page_of(browser, f"{path}?tab=logs&instance=executor-9&lines=1")
    assert unknown.attr("value", "#log-instance option[selected]") == "driver"
    assert unknown.one("#log-text").tag.get_text() == "line 99\n"


def test_a_log_range_beyond_any_offset_is_refused_and_beyond_the_file_is_empty(
    browser: Browser,
) -> None:
    path = f"/applications/{running(browser)}?tab=logs"
    for name in ("start", "end"):
        refused = browser.page(f"{path}&{name}=99999999999999999999999")
        assert refused.status_code == 422, refused.text
        assert parse(refused).texts(".field-errors li code") == [f"query.{name}"]

    beyond = page_of(browser, f"{path}&start={2**62}")
    assert beyond.one("#log-text").tag.get_text() == ""
    whole = page_of(browser, f"{path}&start=0&end={2**62}")
    assert whole.one("#log-text").tag.get_text().endswith("line 98\nline 99\n")


def test_a_starting_application_has_no_logs_yet(browser: Browser) -> None:
    application_id = started(browser)
    page = page_of(browser, f"/applications/{application_id}")
    assert page.attr("data-state", "h1 .badge") == "STARTING"
    assert page.text("[data-log-status]") == "No logs yet."
    assert page.one("#log-instance").has_attr("disabled")
    assert page.text("[data-chart-empty]") == "No progress reported yet."
    assert "No executor figures yet" in page.text("[data-figures-note]")
    assert page.text("#attempts-table tbody") == "Not submitted yet."


def test_an_aborted_application_is_read_only_with_its_abort_as_information(
    browser: Browser,
) -> None:
    application_id = aborted(browser)

    page = page_of(browser, f"/applications/{application_id}")

    assert page.attr("data-state", "h1 .badge") == "ABORTED"
    assert page.text("h1 .badge") == "Aborted"
    abort = page.one("#abort-open")
    assert abort.has_attr("disabled")
    assert abort.attr("title") == "The application has ended; there is nothing to abort"
    assert page.one("#log-follow").has_attr("disabled")
    aborts = page.all("#events-body tr[data-event] .event-kind")
    assert "aborted" in [kind.text() for kind in aborts]
    levels = {
        row.text(".event-kind"): row.attr("data-level")
        for row in page.all("#events-body tr[data-event]")
    }
    assert levels["aborted"] == "info"
    assert page.one("#events-warnings").has_attr("hidden")
    assert fact(page, "finished").startswith("2026-")
    # Nothing polls an ended application, and its rows/s are not shown.
    for live in ("#app-figures", "#throughput"):
        assert not page.one(live).has_attr("hx-trigger"), live
    assert not page.has("#events-newer")
    assert not page.has('[data-latest="inputRowsPerSecond"]')
    assert page.text("[data-chart-now]").startswith("Ended: rows/s are shown while")


def test_a_failed_application_shows_its_error_with_the_log_linked(browser: Browser) -> None:
    application_id = started(browser)
    browser.stage.tick()
    with browser.stage.services.store.transaction() as repos:
        record = repos.applications.get(application_id)
        repos.applications.update(
            application_id,
            version=record.version,
            at=browser.stage.services.clock.now(),
            error_message="ModuleNotFoundError: No module named 'kafka'\nmore",
        )
    page = page_of(browser, f"/applications/{application_id}")
    summary = page.one("#error-summary")
    assert summary.text("[data-error]") == "ModuleNotFoundError: No module named 'kafka'"
    assert summary.text("details.trace pre") == "more"
    assert summary.attr("href", "[data-log-link]") == (
        f"/applications/{application_id}?tab=logs&instance=driver&attempt=1"
    )


def test_an_unknown_application_is_a_404_page(browser: Browser) -> None:
    page = browser.page("/applications/app-nope")
    assert page.status_code == 404
    assert "app-nope" in page.text
    assert parse(page).has("html")
    for partial in ("status", "chart", "events?after=0"):
        assert browser.page(f"/applications/app-nope/{partial}").status_code == 404, partial


def test_the_page_sends_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    response = anonymous_web.get("/applications/anything")
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=%2Fapplications%2Fanything"
    partial = anonymous_web.get("/applications/anything/status")
    assert partial.status_code == 303
    refresh = anonymous_web.get(
        "/applications/anything/status",
        headers={"HX-Request": "true", "HX-Current-URL": "http://x/applications/anything?tab=logs"},
    )
    assert refresh.status_code == 204
    assert refresh.headers["HX-Redirect"] == "/signin?next=%2Fapplications%2Fanything%3Ftab%3Dlogs"


def test_a_restart_shows_when_its_next_attempt_and_then_its_held_queries_start(
    browser: Browser,
) -> None:
    stage = browser.stage
    policy = {"type": "Always", "onFailureRetryInterval": 10}
    job = pipeline_manifest("restarts", restartPolicy=policy)
    stage.api.put("/api/v1/jobs/restarts", json=job).raise_for_status()
    application_id = stage.api.post("/api/v1/jobs/restarts/run").json()["id"]
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    assert not page_of(browser, f"/applications/{application_id}").has("[data-fact=nextAttemptAt]")
    stage.services.clock.advance(1)  # type: ignore[attr-defined]
    stage.launcher.exit(-1, 137)
    stage.tick()
    due = stage.api.get(f"/api/v1/applications/{application_id}").json()["nextAttemptAt"]
    assert due == "2026-01-01T00:00:11+00:00"
    page = page_of(browser, f"/applications/{application_id}")
    assert page.text("h1 .badge") == "Pending Rerun"
    assert page.text("[data-fact-term=nextAttemptAt]") == "Next attempt"
    assert page.attr("datetime", "[data-fact=nextAttemptAt] time") == due
    stage.tick()  # submitted the lead early: it holds its queries until then
    page = page_of(browser, f"/applications/{application_id}")
    assert page.attr("data-state", "h1 .badge") == "STARTING"
    assert page.text("[data-fact-term=nextAttemptAt]") == "Queries start"
    assert page.attr("datetime", "[data-fact=nextAttemptAt] time") == due
