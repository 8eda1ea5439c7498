"""A job's page over HTTP: tabs, header actions, API operations, the applications table and its
filters, and Run, Abort app and Delete through the page's forms (the page's only way to act)."""

from __future__ import annotations

import json

import httpx

from streamjobs.domain.access import PrincipalKind
from tests.factories import pipeline_manifest
from tests.web.conftest import Browser
from tests.web.html import Node, parse


def run_through_the_api(browser: Browser, job: str = "ticks") -> dict[str, object]:
    """Run with the session cookie plus the CSRF header, as a script would."""
    started = browser.client.post(f"/api/v1/jobs/{job}/run", headers={"X-CSRF-Token": browser.csrf})
    assert started.status_code == 201, started.text
    application: dict[str, object] = started.json()
    return application


def make_running(browser: Browser, application_id: str) -> None:
    browser.stage.tick()
    assert browser.stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    browser.stage.tick()
    state = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "RUNNING"


def settle(browser: Browser) -> None:
    """Let the supervisor carry out what was asked (an abort takes a tick to signal, one to end)."""
    browser.stage.tick()
    browser.stage.tick()


def row_of(page: httpx.Response | Node, application_id: str) -> Node:
    """The table row of one application."""
    document = page if isinstance(page, Node) else parse(page)
    return document.one(f'tr[data-id="{application_id}"]')


def test_the_page_has_its_tabs_header_actions_and_api_operations(browser: Browser) -> None:
    page = browser.page("/jobs/ticks")
    assert page.status_code == 200
    document = parse(page)
    assert document.text("h1") == "ticks Idle"
    assert "badge-idle" in document.one("h1 #job-status .badge").classes
    assert document.attr("aria-selected", "#tab-details") == "false"
    assert document.attr("aria-selected", "#tab-applications") == "true"
    assert document.attr("role", "#panel-applications") == "tabpanel"
    assert not document.one("#panel-applications").has_attr("hidden")
    assert document.one("#panel-details").has_attr("hidden")
    assert document.one("#panel-notifications").has_attr("hidden")
    actions = document.one('.page-head [aria-label="Job actions"]')
    assert actions.attr("href", 'a[href="/jobs/ticks/configure"]')
    assert actions.text('a[href="/jobs/new?from=ticks"]') == "Duplicate"
    assert actions.text('a[href="/jobs/ticks/template"]') == "Template JSON"
    assert actions.text('button[data-open-dialog="delete-dialog"]') == "Delete"
    assert actions.text('button[data-open-dialog="api-dialog"]') == "API operations"
    assert document.text('#delete-dialog button[type="submit"]') == "Yes, delete it"
    assert document.text('form[action="/jobs/ticks/run"] button[type="submit"]') == "Run"
    assert "No applications yet" in document.text("#applications-rows tr.empty")

    server = browser.stage.services.settings.resolved_public_url
    auth = '-H "Authorization: Bearer $STREAMJOBS_TOKEN"'
    job_url = f"{server}/api/v1/jobs/ticks"
    assert [node.tag.get_text() for node in document.all('pre[id^="api-command-"]')] == [
        f"curl {auth} '{job_url}'",
        f"curl -X POST {auth} '{job_url}/run'",
        f"curl -X POST {auth} '{job_url}/stop'",
        f"curl -X POST {auth} '{job_url}/suspend'",
        f"curl -X POST {auth} '{job_url}/resume'",
        f"curl -X POST {auth} '{job_url}/snapshots'",
        f"curl -X POST {auth} '{job_url}/upgrade?mode=last-state&dryRun=true'",
        f"curl -X POST {auth} '{job_url}/upgrade?mode=last-state'",
        f"curl {auth} '{job_url}/applications'",
        f"curl -X DELETE {auth} '{job_url}'",
    ]
    assert len(document.all('button[data-copy^="api-command-"]')) == 10


def test_the_details_tab_shows_compute_and_metadata(browser: Browser) -> None:
    services = browser.stage.services
    with services.store.transaction() as repos:
        if repos.users.find("svc-sized") is None:
            repos.users.add(
                "svc-sized",
                is_admin=False,
                at=services.clock.now(),
                kind=PrincipalKind.SERVICE_ACCOUNT,
            )
    manifest = pipeline_manifest(
        "sized",
        runAs="svc-sized",
        instance={
            "deployment": "standard",
            "driver": "small",
            "executor": "medium",
            "executors": 3,
        },
    )
    manifest["metadata"].update(description="Sized <job>", tags={"team": "payments"})
    browser.stage.api.put("/api/v1/jobs/sized", json=manifest).raise_for_status()
    page = browser.page("/jobs/sized?tab=details")
    assert page.status_code == 200
    document = parse(page)
    assert not document.one("#panel-details").has_attr("hidden")
    text = document.text("#panel-details")
    for fact in [
        "Deployment type Standard",
        "Driver node small · 1 core, 1 GB",
        "Executor node medium · 2 cores, 4 GB",
        "Bundle default",
        "Total executor resources 3 x 2 cores = 6 cores, 12 GB",
        "Namespace default",
        "Run as svc-sized",
        "Created by admin",
        "team: payments",
        "Description Sized <job>",
    ]:
        assert fact in text, fact
    assert "Volume" not in text


def test_a_run_shows_in_the_table(browser: Browser) -> None:
    application = run_through_the_api(browser)
    application_id = str(application["id"])
    make_running(browser, application_id)
    document = parse(browser.page("/jobs/ticks"))
    row = row_of(document, application_id)
    assert row.text(f'a[href="/applications/{application_id}"]') == "ticks-1"
    assert row.attr("data-state") == "RUNNING"
    assert row.text('[data-cell="state"] .badge') == "Running"
    assert row.text('[data-cell="attempts"]') == "1 / 1"
    assert row.text("[data-menu-button]") == "Actions"
    abort = row.one(f'[role="menuitem"][data-abort="{application_id}"]')
    assert abort.text() == "Abort app"
    assert not abort.has_attr("disabled")
    assert document.text("h1 #job-status") == "Running"


def test_filters_hide_rows_but_keep_them_loaded(browser: Browser) -> None:
    first = str(run_through_the_api(browser)["id"])
    aborted = browser.client.post(
        f"/api/v1/applications/{first}/abort", headers={"X-CSRF-Token": browser.csrf}
    )
    assert aborted.status_code == 202, aborted.text
    settle(browser)
    second = str(run_through_the_api(browser)["id"])

    by_status = parse(browser.page("/jobs/ticks?status=ABORTED"))
    assert not row_of(by_status, first).has_attr("hidden")
    assert row_of(by_status, second).has_attr("hidden")
    assert by_status.text('#app-status option[value="ABORTED"][selected]') == "Aborted"
    assert by_status.text("#applications-summary") == "1 of 2 applications shown"

    by_search = parse(browser.page(f"/jobs/ticks?search={second}"))
    assert row_of(by_search, first).has_attr("hidden")
    assert not row_of(by_search, second).has_attr("hidden")

    by_run_as = parse(browser.page("/jobs/ticks?runAs=nobody"))
    assert by_run_as.text("#applications-summary") == "0 of 2 applications shown"
    assert by_run_as.text('#app-run-as option[value="nobody"][selected]') == "nobody"
    by_trigger = parse(browser.page("/jobs/ticks?triggeredBy=admin"))
    assert by_trigger.text("#applications-summary") == "2 of 2 applications shown"
    assert browser.page("/jobs/ticks?status=sideways").status_code == 422


def test_run_and_abort_work_without_script(browser: Browser) -> None:
    assert browser.client.post("/jobs/ticks/run").status_code == 403
    assert browser.client.post("/jobs/ticks/run", data={"csrf": "forged"}).status_code == 403
    started = browser.submit("/jobs/ticks/run", {})
    assert started.status_code == 303
    assert started.headers["location"] == "/jobs/ticks"

    again = browser.submit("/jobs/ticks/run", {})
    assert again.status_code == 409
    assert "ticks-1" in parse(again).text('[role="alert"]')

    application_id = browser.stage.api.get("/api/v1/jobs/ticks/applications").json()["items"][0][
        "id"
    ]
    make_running(browser, application_id)
    page = parse(browser.page("/jobs/ticks"))
    assert page.has(f'form[action="/applications/{application_id}/abort"]')
    assert browser.client.post(f"/applications/{application_id}/abort").status_code == 403
    aborting = browser.submit(f"/applications/{application_id}/abort", {"next": "/jobs/ticks"})
    assert aborting.status_code == 303
    assert aborting.headers["location"] == "/jobs/ticks"
    settle(browser)
    state = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "ABORTED"

    row = row_of(browser.page("/jobs/ticks"), application_id)
    abort = row.one("[data-abort]")
    assert abort.has_attr("disabled")
    assert (abort.attr("title") or "").startswith("This application has ended")
    assert not row.has(f'form[action="/applications/{application_id}/abort"]')
    ended = browser.submit(f"/applications/{application_id}/abort", {})
    assert ended.status_code == 409
    assert parse(ended).has('[role="alert"]')


def test_abort_goes_back_only_to_local_pages(browser: Browser) -> None:
    application_id = str(run_through_the_api(browser)["id"])
    answer = browser.submit(f"/applications/{application_id}/abort", {"next": "//evil.example/"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/jobs/ticks"


def test_delete_is_refused_while_an_application_is_live_then_works(browser: Browser) -> None:
    application_id = str(run_through_the_api(browser)["id"])
    assert browser.client.post("/jobs/ticks/delete").status_code == 403
    refused = browser.submit("/jobs/ticks/delete", {})
    assert refused.status_code == 409
    assert "has a live application ticks-1" in parse(refused).text(".notice-error[role=alert]")
    assert browser.stage.api.get("/api/v1/jobs/ticks").status_code == 200

    browser.client.post(
        f"/api/v1/applications/{application_id}/abort", headers={"X-CSRF-Token": browser.csrf}
    ).raise_for_status()
    settle(browser)
    deleted = browser.submit("/jobs/ticks/delete", {})
    assert deleted.status_code == 303
    assert deleted.headers["location"] == "/jobs"
    assert browser.stage.api.get("/api/v1/jobs/ticks").status_code == 404
    assert browser.page("/jobs/ticks").status_code == 404


def test_the_template_page_shows_the_formatted_template(browser: Browser) -> None:
    page = browser.page("/jobs/ticks/template")
    assert page.status_code == 200
    shown = parse(page).one("pre#template-json").tag.get_text()
    assert json.loads(shown) == browser.stage.api.get("/api/v1/jobs/ticks/template").json()
    assert '\n  "apiVersion"' in shown
    assert browser.page("/jobs/nope/template").status_code == 404


def test_an_unknown_job_is_a_404_page(browser: Browser) -> None:
    for path in ["/jobs/nope", "/jobs/nope/live"]:
        page = browser.page(path)
        assert page.status_code == 404, path
        assert "job 'nope' does not exist" in parse(page).text("main"), path


def test_the_pages_send_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    for path in [
        "/jobs/ticks",
        "/jobs/ticks?tab=details",
        "/jobs/ticks/template",
        "/jobs/ticks/live",
    ]:
        response = anonymous_web.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/signin?next="), path
    for path in [
        "/jobs/ticks/run",
        "/jobs/ticks/stop",
        "/jobs/ticks/resume",
        "/jobs/ticks/delete",
        "/applications/app-x/abort",
    ]:
        response = anonymous_web.post(path, data={"csrf": "x"})
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/signin"), path
