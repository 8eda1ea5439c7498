"""The application page's live parts, as htmx asks for them: the status (with its out-of-band
swaps), the throughput chart over each range, and the events newest first, paged and polled."""

from __future__ import annotations

from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_application_page import aborted, page_of, running, started


def test_the_chart_is_drawn_on_the_server_over_the_application_s_life(browser: Browser) -> None:
    application_id = running(browser)
    browser.stage.services.clock.advance(180)  # type: ignore[attr-defined]

    page = page_of(browser, f"/applications/{application_id}")

    chart = page.one("#throughput")
    assert chart.attr("data-range") == "all"
    assert chart.attr("data-points") == "2"
    assert chart.texts(".range-picker a") == ["15 min", "1 h", "6 h", "All"]
    assert chart.attr("aria-current", '.range-picker a[data-range="all"]') == "true"
    assert chart.attr("href", '.range-picker a[data-range="1h"]') == (
        f"/applications/{application_id}?range=1h"
    )
    span = [time.attr("datetime") for time in chart.all("[data-chart-span] time")]
    assert span == ["2026-01-01T00:00:00+00:00", "2026-01-01T00:03:00+00:00"]
    assert [path.attr("data-series") for path in chart.all("path.series")] == [
        "input",
        "processed",
        "duration",
    ]
    assert chart.text("desc").startswith("2 progress reports from 00:00:01 to 00:00:02 UTC.")
    assert not chart.has("[data-chart-empty]")
    # Over a life of three minutes the time axis ticks every 30 s, across the whole width.
    ticks = chart.texts("text.time-tick")
    assert ticks == [f"00:0{second // 60}:{second % 60:02d}" for second in range(0, 181, 30)]
    first_x = float(str(chart.all("text.time-tick")[0].attr("x")))
    assert first_x == 50.0


def test_the_chart_partial_gives_each_range_and_refuses_others(browser: Browser) -> None:
    application_id = running(browser)
    browser.stage.services.clock.advance(30 * 60)  # type: ignore[attr-defined]
    path = f"/applications/{application_id}/chart"

    quarter = parse(browser.page(f"{path}?range=15m"))
    assert quarter.attr("data-range", "#throughput") == "15m"
    assert quarter.text("[data-chart-empty]") == "No progress in this range."
    assert not quarter.has("path.series")
    assert not quarter.has("html"), "a partial, not a page"

    six_hours = parse(browser.page(f"{path}?range=6h"))
    assert six_hours.attr("data-points", "#throughput") == "2"
    assert six_hours.attr("hx-get", "#throughput") == f"{path}?range=6h"

    wrong = browser.page(f"{path}?range=2d")
    assert wrong.status_code == 422
    assert "range" in wrong.text


def test_an_unknown_range_on_the_page_is_refused(browser: Browser) -> None:
    application_id = started(browser)
    assert browser.page(f"/applications/{application_id}?range=forever").status_code == 422


def test_the_status_partial_swaps_the_head_facts_and_warnings_beside_the_figures(
    browser: Browser,
) -> None:
    application_id = running(browser)
    status = parse(browser.page(f"/applications/{application_id}/status"))
    assert status.attr("hx-trigger", "#app-figures") == "every 5s, refresh-status from:body"
    for region in (
        "#app-state",
        "#app-actions",
        "#events-warnings",
        "#error-summary",
        "#app-facts",
    ):
        assert status.attr("hx-swap-oob", region) == "true", region
    assert status.text("#app-state") == "Running"
    assert not status.has("html")


def test_events_are_newest_first_paged_and_polled_for_newer(browser: Browser) -> None:
    application_id = running(browser)
    with browser.stage.services.store.transaction() as repos:
        for number in range(60):
            repos.applications.add_event(
                application_id,
                at=browser.stage.services.clock.now(),
                kind="note",
                message=f"note {number}",
            )
    page = page_of(browser, f"/applications/{application_id}?tab=events")

    rows = page.all("#events-body tr[data-event]")
    assert len(rows) == 50
    assert rows[0].text(".headline") == "note 59"
    assert rows[49].text(".headline") == "note 10"
    older = page.attr("hx-get", "#events-more button")
    assert older == f"/applications/{application_id}/events?before={rows[49].attr('data-event')}"

    rest = parse(browser.page(older))
    headlines = rest.texts("tr[data-event] .headline")
    assert headlines[:10] == [f"note {number}" for number in range(9, -1, -1)]
    assert "submitted" in rest.texts("tr[data-event] .event-kind")
    assert not rest.has("#events-more"), "the oldest page has no More"

    newest_id = int(str(rows[0].attr("data-event")))
    with browser.stage.services.store.transaction() as repos:
        repos.applications.add_event(
            application_id, at=browser.stage.services.clock.now(), kind="note", message="later"
        )
    newer = parse(browser.page(f"/applications/{application_id}/events?after={newest_id}"))
    assert newer.texts("tr[data-event] .headline") == ["later"]
    assert newer.attr("hx-get", "#events-newer") == (
        f"/applications/{application_id}/events?after={newest_id + 1}"
    )


def test_the_events_partial_refuses_bad_ids(browser: Browser) -> None:
    application_id = started(browser)
    path = f"/applications/{application_id}/events"
    for query in ("", "?after=x", "?before=-1", "?after=1&before=2", "?after=99999999999999999999"):
        assert browser.page(path + query).status_code == 422, query


def test_a_trace_is_collapsed_and_a_failure_is_an_error(browser: Browser) -> None:
    application_id = running(browser)
    trace = "query failed: boom\nTraceback (most recent call last):\n  File x\nValueError: boom"
    with browser.stage.services.store.transaction() as repos:
        repos.applications.add_event(
            application_id,
            at=browser.stage.services.clock.now(),
            kind="query-failed",
            message=trace,
        )
    page = page_of(browser, f"/applications/{application_id}?tab=events")
    row = page.all("#events-body tr[data-event]")[0]
    assert row.attr("data-level") == "error"
    assert row.text(".level") == "Error"
    assert row.text(".headline") == "query failed: boom"
    assert row.text("details.trace summary") == "Trace (3 more lines)"
    assert row.text("details.trace pre").endswith("ValueError: boom")
    assert not row.one("details.trace").has_attr("open")


def test_an_ended_application_s_newer_events_poll_stops(browser: Browser) -> None:
    application_id = aborted(browser)
    newer = parse(browser.page(f"/applications/{application_id}/events?after=0"))
    assert "aborted" in newer.texts("tr[data-event] .event-kind")
    assert not newer.has("#events-newer")
