"""The application page over HTTP: what it renders server-side for a running, a starting and an
aborted application, the Logs form without script, and the 404 and sign-in rules."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx

from streamjobs.launch.spark_ui import ExecutorFigures, ExecutorMetrics
from tests.factories import pipeline_manifest
from tests.web.conftest import Browser

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


def labels_of(page: str) -> list[str]:
    return [html.unescape(label) for label in re.findall(r'<div class="label">([^<]*)</div>', page)]


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

    page = browser.page(f"/applications/{application_id}")

    assert page.status_code == 200
    text = page.text
    assert re.search(r'<h1><span class="app-name">ticks-1</span>', text)
    assert 'data-state="RUNNING"' in text
    assert 'href="/jobs/ticks"' in text
    assert re.search(r'id="abort-open"[^>]*>Abort app', text)
    assert "Yes, abort it" in text
    for key, label in [
        ("details", "Details"),
        ("logs", "Logs"),
        ("events", "Events"),
        ("template", "Template JSON"),
    ]:
        assert f'role="tab" id="tab-{key}"' in text
        assert f'id="panel-{key}"' in text
        assert f">{label}" in text
    assert labels_of(text) == MAIN_LABELS + MORE_LABELS
    assert "<summary>More</summary>" in text
    cards = dict(
        re.findall(
            r'data-metric="(\w+)"[^>]*>\s*<div class="label">[^<]*</div>\s*'
            r'<div class="value" data-metric-value>([^<]*)<',
            text,
        )
    )
    assert cards["completed_tasks"] == "1,234"
    assert cards["failed_tasks"] == "2"
    assert cards["task_time_ms"] == "1.5 min"
    assert cards["shuffle_read_bytes"] == "3.0 MiB"
    assert cards["driver_task_time_ms"] == "1.5 min"
    assert cards["total_cores"] == "6"
    assert cards["spilled_bytes"] == "1.5 KiB"
    assert '<svg id="throughput-chart"' in text
    assert "<title>Input rows/s, processed rows/s and batch duration" in text
    for fact in ["Driver state", "Executor state", "Attempts", "Duration", "Submitted", "Finished"]:
        assert f"<dt>{fact}</dt>" in text
    assert "1 submission, 1 execution" in text
    assert "<dd>admin" in text
    assert "<dd>default</dd>" in text
    assert '<span class="tag">team: payments</span>' in text
    assert "Exit code</dt>" in text  # present, hidden until there is one
    # Logs: the driver instance, its last 500 lines, followed by default, and its download.
    assert '<option value="driver" selected>driver</option>' in text
    assert "line 0\n" in text
    assert "line 99\n" in text
    assert re.search(r'id="log-follow" checked', text)
    assert f"/api/v1/applications/{application_id}/logs/download?instance=driver" in text
    # Events, and the template the application runs with.
    assert "driver-running" in text
    assert re.search(r'<pre class="code" id="template-json"[^>]*>\{\n  &#34;apiVersion&#34;', text)
    assert "&#34;checkpointLocation&#34;: &#34;file://" in text
    assert "Latest: input" in text
    assert ">20.0</span> rows/s" in text  # the latest input rate
    assert ">800 ms</span>" in text  # the latest batch duration


def test_the_page_reads_the_same_api_the_script_refreshes_from(browser: Browser) -> None:
    application_id = running(browser)
    progress = browser.client.get(f"/api/v1/applications/{application_id}/progress?limit=500")
    items = [item for item in progress.json()["items"] if item["type"] == "progress"]
    assert [item["event"]["progress"]["batchId"] for item in items] == [1, 2]
    logs = browser.client.get(
        f"/api/v1/applications/{application_id}/logs", params={"instance": "driver", "tail": 500}
    ).json()
    assert logs["instances"] == {"driver": logs["size"]}
    assert browser.page("/static/application.js").status_code == 200
    assert browser.page("/static/application.css").status_code == 200


def test_the_logs_form_works_without_script(browser: Browser) -> None:
    application_id = running(browser)
    path = f"/applications/{application_id}"

    tail = browser.page(f"{path}?tab=logs&instance=driver&attempt=&lines=3&start=&end=").text
    assert re.search(r'id="panel-logs"[^>]*tabindex="0" >', tail)
    assert re.search(r'id="panel-details"[^>]*hidden', tail)
    assert re.search(r"<pre class=\"log\"[^>]*>line 97\nline 98\nline 99\n</pre>", tail)
    assert 'value="3"' in tail

    ranged = browser.page(f"{path}?tab=logs&start=0&end=7").text
    assert re.search(r"<pre class=\"log\"[^>]*>line 0\n</pre>", ranged)
    assert "bytes 0\u20137 of" in ranged

    assert "start: give a whole number" in browser.page(f"{path}?tab=logs&start=%C2%B2").text
    wrong = browser.page(f"{path}?tab=logs&lines=many")
    assert wrong.status_code == 200
    assert "lines: give a whole number, not &#39;many&#39;" in wrong.text

    unknown = browser.page(f"{path}?tab=logs&instance=executor-9&lines=1").text
    assert '<option value="driver" selected>driver</option>' in unknown
    assert ">line 99\n</pre>" in unknown


def test_a_starting_application_has_no_logs_yet(browser: Browser) -> None:
    application_id = started(browser)
    page = browser.page(f"/applications/{application_id}").text
    assert 'data-state="STARTING"' in page
    assert "No logs yet." in page
    assert re.search(r'<select id="log-instance" name="instance" disabled', page)
    assert "No progress reported yet." in page
    assert "No executor figures yet" in page
    assert "Not submitted yet." in page


def test_an_aborted_application_is_read_only_and_counts_its_warnings(browser: Browser) -> None:
    application_id = running(browser)
    aborting = browser.client.post(
        f"/api/v1/applications/{application_id}/abort", headers={"X-CSRF-Token": browser.csrf}
    )
    assert aborting.status_code == 202
    browser.stage.tick()
    browser.stage.tick()

    page = browser.page(f"/applications/{application_id}#events").text

    assert 'data-state="ABORTED"' in page
    assert re.search(r'id="abort-open" aria-haspopup="dialog"\s+disabled title="', page)
    assert re.search(r'<input type="checkbox" id="log-follow"\s+disabled', page)
    assert '<tr data-event="' in page
    assert re.search(
        r'class="warning">\s*<td><time[^>]*>[^<]*</time></td><td><span class="event-kind">aborted',
        page,
    )
    assert re.search(r'data-warning-count\s*>\s*<span aria-hidden="true">1</span>', page)
    assert 'data-finished-at="2026-' in page


def test_an_unknown_application_is_a_404_page(browser: Browser) -> None:
    page = browser.page("/applications/app-nope")
    assert page.status_code == 404
    assert "app-nope" in page.text
    assert "<html" in page.text


def test_the_page_sends_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    response = anonymous_web.get("/applications/anything")
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=%2Fapplications%2Fanything"


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
    page = browser.page(f"/applications/{application_id}").text
    assert re.search(r'<dd data-fact="nextAttemptAt" hidden>\s*</dd>', page)
    stage.services.clock.advance(1)  # type: ignore[attr-defined]
    stage.launcher.exit(-1, 137)
    stage.tick()
    due = stage.api.get(f"/api/v1/applications/{application_id}").json()["nextAttemptAt"]
    assert due == "2026-01-01T00:00:11+00:00"
    page = browser.page(f"/applications/{application_id}").text
    assert re.search(r'data-fact-term="nextAttemptAt" >\s*Next attempt\s*</dt>', page)
    assert f'datetime="{due}"' in fact(page, "nextAttemptAt")
    stage.tick()  # submitted the lead early: it holds its queries until then
    page = browser.page(f"/applications/{application_id}").text
    assert 'data-state="STARTING"' in page
    assert re.search(r'data-fact-term="nextAttemptAt" >\s*Queries start\s*</dt>', page)
    assert f'datetime="{due}"' in fact(page, "nextAttemptAt")


def fact(page: str, name: str) -> str:
    found = re.search(rf'<dd data-fact="{name}"[^>]*>(.*?)</dd>', page, re.DOTALL)
    assert found, name
    return found.group(1)
