"""Stop and Resume on a job's page: enabled only when the job's live application can take them,
each behind a confirmation whose form posts with the session's CSRF token, refused with the
permission's words for those without RUN, and a refusal raised after the page was drawn (someone
else acted first) shown as an alert on the page, 409."""

from __future__ import annotations

from contextlib import closing

from streamjobs.domain.access import Permission
from streamjobs.web.job_view import RESUME_REFUSAL, STOP_REFUSALS
from tests.factories import pipeline_manifest
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, signed_in
from tests.web.conftest import Browser
from tests.web.html import Node, parse
from tests.web.test_job_detail import make_running, run_through_the_api, settle

NEEDS_RUN = "Needs the RUN permission on resource bundle 'pay'"


def state_of(browser: Browser, application_id: str) -> str:
    state: str = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    return state


def refused(document: Node, label: str) -> str:
    """The reason a disabled ``label`` button gives, checked to be its accessible text too."""
    (button,) = [b for b in document.all("#job-live-actions button[disabled]") if b.text() == label]
    reason = button.attr("title") or ""
    assert document.text(f"#{button.attr('aria-describedby')}") == reason
    return reason


def suspended(browser: Browser, name: str = "fragile") -> str:
    """A job that suspends on failure, whose only application failed while running; its id."""
    manifest = pipeline_manifest(name, processing={"suspendOnFailure": True})
    browser.stage.api.put(f"/api/v1/jobs/{name}", json=manifest).raise_for_status()
    application_id = str(run_through_the_api(browser, name)["id"])
    make_running(browser, application_id)
    browser.stage.launcher.exit(-1, 1)
    browser.stage.tick()
    assert state_of(browser, application_id) == "SUSPENDED"
    return application_id


def test_stop_asks_first_then_stops_the_live_application(browser: Browser) -> None:
    idle = parse(browser.page("/jobs/ticks"))
    assert refused(idle, "Stop") == STOP_REFUSALS["none"]
    assert refused(idle, "Resume") == RESUME_REFUSAL
    assert not idle.has("#stop-dialog")

    application_id = str(run_through_the_api(browser)["id"])
    make_running(browser, application_id)
    page = parse(browser.page("/jobs/ticks"))
    stop = page.one("#stop-button")
    assert stop.attr("data-open-dialog") == "stop-dialog"
    assert not stop.has_attr("disabled")
    dialog = page.one("#stop-dialog")
    assert dialog.text("h2") == "Stop ticks-1?"
    assert dialog.attr("action", "form") == "/jobs/ticks/stop"
    assert dialog.attr("value", 'input[name="csrf"]') == browser.csrf
    assert dialog.text('button[type="submit"]') == "Yes, stop it"
    assert refused(page, "Resume") == RESUME_REFUSAL
    menu = page.one(f'tr[data-id="{application_id}"] [role="menu"]')
    assert menu.attr("data-open-dialog", '[role="menuitem"]:not([data-abort])') == "stop-dialog"
    assert page.has('noscript form[action="/jobs/ticks/stop"]')

    assert browser.client.post("/jobs/ticks/stop").status_code == 403
    assert browser.client.post("/jobs/ticks/stop", data={"csrf": "forged"}).status_code == 403
    assert state_of(browser, application_id) == "RUNNING"

    stopping = browser.submit("/jobs/ticks/stop", {"next": "/jobs/ticks"})
    assert stopping.status_code == 303
    assert stopping.headers["location"] == "/jobs/ticks"
    assert state_of(browser, application_id) == "TERMINATING"
    assert refused(parse(browser.page("/jobs/ticks")), "Stop") == STOP_REFUSALS["stopping"]

    settle(browser)
    assert state_of(browser, application_id) == "STOPPED"
    again = browser.submit("/jobs/ticks/stop", {})
    assert again.status_code == 409
    answer = parse(again)
    assert "no live application" in answer.text(".notice-error[role=alert]")
    assert refused(answer, "Stop") == STOP_REFUSALS["none"]


def test_stop_goes_back_only_to_local_pages(browser: Browser) -> None:
    for target, local in [
        ("/applications/app-1", True),
        ("https://evil.example/", False),
        ("//evil.example/", False),
        ("/\\evil.example", False),
    ]:
        run_through_the_api(browser)
        answer = browser.submit("/jobs/ticks/stop", {"next": target})
        assert answer.status_code == 303, target
        assert answer.headers["location"] == (target if local else "/jobs/ticks"), target
        settle(browser)


def test_resume_asks_first_then_starts_the_suspended_application_again(
    browser: Browser,
) -> None:
    application_id = suspended(browser)
    page = parse(browser.page("/jobs/fragile"))
    resume = page.one("#resume-button")
    assert not resume.has_attr("disabled")
    dialog = page.one("#resume-dialog")
    assert dialog.text("h2") == "Resume fragile-1?"
    assert dialog.attr("action", "form") == "/jobs/fragile/resume"
    assert dialog.text('button[type="submit"]') == "Yes, resume it"
    assert not page.one("#stop-button").has_attr("disabled")  # a suspended one may be stopped
    row = page.one(f'tr[data-id="{application_id}"]')
    assert row.texts('[role="menuitem"]') == ["Stop app", "Resume app", "Abort app"]
    assert row.text('[data-cell="state"] .badge') == "Suspended"

    assert browser.client.post("/jobs/fragile/resume", data={"csrf": "forged"}).status_code == 403
    assert state_of(browser, application_id) == "SUSPENDED"
    resumed = browser.submit("/jobs/fragile/resume", {"next": "/jobs/fragile"})
    assert resumed.status_code == 303
    assert resumed.headers["location"] == "/jobs/fragile"
    assert state_of(browser, application_id) == "STARTING"
    assert refused(parse(browser.page("/jobs/fragile")), "Resume") == RESUME_REFUSAL

    again = browser.submit("/jobs/fragile/resume", {})
    assert again.status_code == 409
    assert "only a suspended" in parse(again).text(".notice-error[role=alert]")


def test_stop_and_resume_need_the_run_permission(stage: Stage, browser: Browser) -> None:
    stage.services.bundles.create("pay", actor=admin_of(stage), data_roots=["file:///tmp/out"])
    stage.api.put(
        "/api/v1/jobs/pay-job", json=pipeline_manifest("pay-job", bundle="pay")
    ).raise_for_status()
    application_id = str(stage.api.post("/api/v1/jobs/pay-job/run").json()["id"])
    add_user(stage, "viewer", bundle="pay", permissions=[Permission.VIEW])
    viewer = signed_in(stage, "viewer")
    with closing(viewer.client):
        page = parse(viewer.page("/jobs/pay-job"))
        assert refused(page, "Stop") == NEEDS_RUN
        assert refused(page, "Resume") == NEEDS_RUN
        assert not page.has("#stop-dialog")
        assert not page.has('form[action="/jobs/pay-job/stop"]')
        stop_item = page.one(f'tr[data-id="{application_id}"] [data-open-dialog="stop-dialog"]')
        assert stop_item.has_attr("disabled")
        assert stop_item.attr("title") == NEEDS_RUN
        for action in ("stop", "resume"):
            answer = viewer.submit(f"/jobs/pay-job/{action}", {})
            assert answer.status_code == 403, action
            assert "needs the RUN permission" in parse(answer).text("main"), action
    assert stage.api.get(f"/api/v1/applications/{application_id}").json()["state"] == "STARTING"


def test_stop_and_resume_of_an_unknown_job_are_404(browser: Browser) -> None:
    for action in ("stop", "resume"):
        answer = browser.submit(f"/jobs/nope/{action}", {})
        assert answer.status_code == 404, action
        assert "job 'nope' does not exist" in parse(answer).text("main"), action
