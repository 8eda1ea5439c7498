"""A job's page over HTTP: tabs, header actions, API operations, the applications table and its
filters, and Run, Abort app and Delete both through the API (as the page's script does) and
through the forms that work without script."""

from __future__ import annotations

import html
import json
import re

import httpx

from streamjobs.domain.access import PrincipalKind
from tests.factories import pipeline_manifest
from tests.web.conftest import Browser


def run_through_the_api(browser: Browser, job: str = "ticks") -> dict[str, object]:
    """Run as the page's script does: the session cookie plus the CSRF header."""
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


def row_of(page: httpx.Response, application_id: str) -> str:
    """The table row of one application, as HTML."""
    found = re.search(rf'<tr data-id="{application_id}".*?</tr>', page.text, re.DOTALL)
    assert found, f"no row for {application_id}"
    return found.group(0)


def test_the_page_has_its_tabs_header_actions_and_api_operations(browser: Browser) -> None:
    page = browser.page("/jobs/ticks")
    assert page.status_code == 200
    assert re.search(r"<h1>ticks <span data-job-status><span class=\"badge badge-idle\"", page.text)
    assert 'role="tablist"' in page.text
    details = re.search(r'<a role="tab" id="tab-details"[^>]*>', page.text, re.DOTALL)
    applications = re.search(r'<a role="tab" id="tab-applications"[^>]*>', page.text, re.DOTALL)
    assert details
    assert 'aria-selected="false"' in details.group(0)
    assert applications
    assert 'aria-selected="true"' in applications.group(0)
    assert 'role="tabpanel" id="panel-applications"' in page.text
    assert "Notifications" not in page.text
    assert 'href="/jobs/ticks/configure">Configure</a>' in page.text
    assert 'href="/jobs/new?from=ticks">Duplicate</a>' in page.text
    assert 'href="/jobs/ticks/template">Template JSON</a>' in page.text
    assert 'data-open-dialog="delete-dialog">Delete</button>' in page.text
    assert ">Yes, delete it</button>" in page.text
    assert 'data-open-dialog="api-dialog">API operations</button>' in page.text
    assert '<button type="submit" class="primary">Run</button>' in page.text
    assert "No applications yet" in page.text

    server = browser.stage.services.settings.resolved_public_url
    commands = [
        html.unescape(c) for c in re.findall(r'<pre id="api-command-\d">(.*?)</pre>', page.text)
    ]
    auth = '-H "Authorization: Bearer $STREAMJOBS_TOKEN"'
    assert commands == [
        f"curl {auth} '{server}/api/v1/jobs/ticks'",
        f"curl -X POST {auth} '{server}/api/v1/jobs/ticks/run'",
        f"curl {auth} '{server}/api/v1/jobs/ticks/applications'",
        f"curl -X DELETE {auth} '{server}/api/v1/jobs/ticks'",
    ]
    assert page.text.count('data-copy="api-command-') == 4


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
    panel = re.search(r'<section role="tabpanel" id="panel-details"[^>]*>', page.text)
    assert panel
    assert "hidden" not in panel.group(0)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))
    for fact in [
        "Deployment type Standard",
        "Driver node small · 1 core, 1 GB",
        "Executor node medium · 2 cores, 4 GB",
        "Bundle default",
        "Total executor resources 3 x 2 cores = 6 cores, 12 GB",
        "Volume none",
        "Namespace default",
        "Run as svc-sized",
        "Created by admin",
        "team: payments",
        "Description Sized &lt;job&gt;",
    ]:
        assert fact in text, fact


def test_a_run_shows_in_the_table_and_refreshes_from_the_api(browser: Browser) -> None:
    application = run_through_the_api(browser)
    application_id = str(application["id"])
    make_running(browser, application_id)
    page = browser.page("/jobs/ticks")
    row = row_of(page, application_id)
    assert f'<a href="/applications/{application_id}">ticks-1</a>' in row
    assert 'data-state="RUNNING"' in row
    assert "badge-running" in row
    assert 'data-cell="attempts">1 / 1<' in row
    assert ">Actions</button>" in row
    abort = re.search(r"<button[^>]*data-abort=[^>]*>Abort app</button>", row, re.DOTALL)
    assert abort
    assert "disabled" not in abort.group(0)
    assert "badge badge-running" in page.text.split("</h1>")[0]
    # What the page's script polls while the application is active.
    listed = browser.client.get("/api/v1/jobs/ticks/applications?limit=20").json()["items"]
    assert [item["id"] for item in listed] == [application_id]
    assert listed[0]["state"] == "RUNNING"


def test_filters_hide_rows_but_keep_them_loaded(browser: Browser) -> None:
    first = str(run_through_the_api(browser)["id"])
    aborted = browser.client.post(
        f"/api/v1/applications/{first}/abort", headers={"X-CSRF-Token": browser.csrf}
    )
    assert aborted.status_code == 202, aborted.text
    settle(browser)
    second = str(run_through_the_api(browser)["id"])

    by_status = browser.page("/jobs/ticks?status=ABORTED")
    assert "hidden" not in row_of(by_status, first).split(">")[0]
    assert "hidden" in row_of(by_status, second).split(">")[0]
    assert '<option value="ABORTED" selected>Aborted</option>' in by_status.text
    assert "1 of 2 applications shown" in by_status.text

    by_search = browser.page(f"/jobs/ticks?search={second}")
    assert "hidden" in row_of(by_search, first).split(">")[0]
    assert "hidden" not in row_of(by_search, second).split(">")[0]

    by_run_as = browser.page("/jobs/ticks?runAs=nobody")
    assert "0 of 2 applications shown" in by_run_as.text
    assert '<option value="nobody" selected>nobody</option>' in by_run_as.text
    assert "2 of 2 applications shown" in browser.page("/jobs/ticks?triggeredBy=admin").text
    assert browser.page("/jobs/ticks?status=sideways").status_code == 422


def test_run_and_abort_work_without_script(browser: Browser) -> None:
    assert browser.client.post("/jobs/ticks/run").status_code == 403
    assert browser.client.post("/jobs/ticks/run", data={"csrf": "forged"}).status_code == 403
    started = browser.submit("/jobs/ticks/run", {})
    assert started.status_code == 303
    assert started.headers["location"] == "/jobs/ticks"

    again = browser.submit("/jobs/ticks/run", {})
    assert again.status_code == 409
    assert 'role="alert"' in again.text
    assert "ticks-1" in html.unescape(again.text)

    application_id = browser.stage.api.get("/api/v1/jobs/ticks/applications").json()["items"][0][
        "id"
    ]
    make_running(browser, application_id)
    page = browser.page("/jobs/ticks")
    assert f'action="/applications/{application_id}/abort"' in page.text
    assert browser.client.post(f"/applications/{application_id}/abort").status_code == 403
    aborting = browser.submit(f"/applications/{application_id}/abort", {"next": "/jobs/ticks"})
    assert aborting.status_code == 303
    assert aborting.headers["location"] == "/jobs/ticks"
    settle(browser)
    state = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "ABORTED"

    row = row_of(browser.page("/jobs/ticks"), application_id)
    abort = re.search(r"<button[^>]*data-abort=[^>]*>Abort app</button>", row, re.DOTALL)
    assert abort
    assert "disabled" in abort.group(0)
    assert 'title="This application has ended' in abort.group(0)
    assert "Yes, abort it" not in row
    ended = browser.submit(f"/applications/{application_id}/abort", {})
    assert ended.status_code == 409
    assert 'role="alert"' in ended.text


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
    message = html.unescape(refused.text)
    assert "has a live application ticks-1" in message
    assert 'class="error notice-error" role="alert"' in refused.text
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
    found = re.search(r'<pre id="template-json"[^>]*>(.*?)</pre>', page.text, re.DOTALL)
    assert found
    shown = json.loads(html.unescape(found.group(1)))
    assert shown == browser.stage.api.get("/api/v1/jobs/ticks/template").json()
    assert '\n  "apiVersion"' in html.unescape(found.group(1))
    assert browser.page("/jobs/nope/template").status_code == 404


def test_an_unknown_job_is_a_404_page(browser: Browser) -> None:
    page = browser.page("/jobs/nope")
    assert page.status_code == 404
    assert "job 'nope' does not exist" in html.unescape(page.text)


def test_the_pages_send_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    for path in ["/jobs/ticks", "/jobs/ticks?tab=details", "/jobs/ticks/template"]:
        response = anonymous_web.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/signin?next="), path
    for path in ["/jobs/ticks/run", "/jobs/ticks/delete", "/applications/app-x/abort"]:
        response = anonymous_web.post(path, data={"csrf": "x"})
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/signin"), path
