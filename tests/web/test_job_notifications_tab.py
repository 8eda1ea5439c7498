"""The job page's Notifications tab over HTTP: the job's subscriptions and health rules, adding,
changing and removing subscriptions (a new version of the job), errors at their field, and who
may edit."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from streamjobs.domain.access import Permission
from streamjobs.domain.health import RuleState
from tests.factories import pipeline_manifest
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, signed_in
from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_application_page import page_of, started

RULES = [
    {"name": "lagging", "metric": "recordsBehind", "threshold": 5000, "durationSeconds": 60},
    {"name": "stalled", "metric": "stalledSeconds", "threshold": 300, "actions": ["restart"]},
]


def add_destination(stage: Stage, name: str) -> None:
    """A webhook destination, created through the destination service as the admin."""
    manifest = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "NotificationDestination",
        "metadata": {"name": name},
        "spec": {"type": "webhook", "url": "http://127.0.0.1:9/hook"},
    }
    stage.services.destinations.create(manifest, actor=admin_of(stage))


def a_job(stage: Stage, **spec: Any) -> dict[str, Any]:
    stage.api.put(
        "/api/v1/jobs/orders", json=pipeline_manifest("orders", health={"rules": RULES}, **spec)
    ).raise_for_status()
    job: dict[str, Any] = stage.api.get("/api/v1/jobs/orders").json()
    return job


def test_the_tab_shows_subscriptions_and_rules_and_saves_a_new_one(browser: Browser) -> None:
    stage = browser.stage
    add_destination(stage, "ops-hook")
    add_destination(stage, "team-hook")
    a_job(stage, notifications=[{"destination": "ops-hook", "events": ["failed"]}])

    page = parse(browser.page("/jobs/orders?tab=notifications"))
    assert page.attr("aria-selected", "#tab-notifications") == "true"
    panel = page.one("#panel-notifications")
    assert not panel.has_attr("hidden")
    assert panel.texts("#subscriptions-table tbody th") == ["ops-hook"]
    assert panel.texts("#subscriptions-table tbody td") == ["failed", "every rule"]
    assert panel.texts("#health-rules-table tbody th") == ["lagging", "stalled"]
    assert panel.text("tr[data-rule=lagging] td.mono") == "recordsBehind > 5000"
    assert panel.attr("data-standing", "tr[data-rule=lagging] td.rule-standing") == "none"
    choices = [option.attr("value") for option in panel.all("select#sub_1_destination option")]
    assert choices == ["", "ops-hook", "team-hook"]

    saved = browser.submit(
        "/jobs/orders/notifications",
        {
            "resource_version": panel.attr("value", "input[name=resource_version]") or "",
            "sub_0_destination": "ops-hook",
            "sub_0_events": ["failed", "suspended"],
            "sub_1_destination": "team-hook",
            "sub_1_events": ["health-firing", "health-recovered"],
            "sub_1_rules": ["lagging"],
        },
    )
    assert saved.status_code == 303, saved.text
    assert saved.headers["location"] == "/jobs/orders?tab=notifications"
    job = stage.api.get("/api/v1/jobs/orders").json()
    assert job["metadata"]["resourceVersion"] == "2"
    assert job["spec"]["notifications"] == [
        {"destination": "ops-hook", "events": ["failed", "suspended"], "rules": []},
        {
            "destination": "team-hook",
            "events": ["health-firing", "health-recovered"],
            "rules": ["lagging"],
        },
    ]
    shown = parse(browser.page("/jobs/orders?tab=notifications"))
    assert shown.has("input#sub_1_rules-lagging[checked]")
    assert not shown.has("input#sub_1_rules-stalled[checked]")

    removed = browser.submit(
        "/jobs/orders/notifications",
        {
            "resource_version": "2",
            "sub_0_destination": "ops-hook",
            "sub_0_events": ["failed"],
            "sub_0_remove": "true",
            "sub_1_destination": "team-hook",
            "sub_1_events": ["completed"],
        },
    )
    assert removed.status_code == 303, removed.text
    job = stage.api.get("/api/v1/jobs/orders").json()
    assert job["spec"]["notifications"] == [
        {"destination": "team-hook", "events": ["completed"], "rules": []}
    ]


def test_errors_are_shown_at_their_field_and_nothing_is_saved(browser: Browser) -> None:
    stage = browser.stage
    add_destination(stage, "ops-hook")
    a_job(stage)
    refused = browser.submit(
        "/jobs/orders/notifications",
        {
            "resource_version": "1",
            "sub_0_destination": "ops-hook",
            "sub_0_events": ["failed"],
            "sub_0_rules": ["no-such-rule"],
        },
    )
    assert refused.status_code == 422
    page = parse(refused)
    assert page.attr("aria-selected", "#tab-notifications") == "true"
    assert "Nothing was saved." in page.text("#notifications-problems")
    assert "no rule named 'no-such-rule'" in page.text("#sub_0_rules-error")
    assert page.attr("aria-invalid", "fieldset#sub_0_rules") == "true"
    assert page.has("input#sub_0_rules-no-such-rule[checked]")

    nowhere = browser.submit(
        "/jobs/orders/notifications",
        {
            "resource_version": "1",
            "sub_0_destination": "ops-hook",
            "sub_0_events": ["failed"],
            "sub_1_destination": "nowhere",
            "sub_1_events": ["failed"],
        },
    )
    assert nowhere.status_code == 422
    page = parse(nowhere)
    assert "'nowhere' does not exist" in page.text("#sub_1_destination-error")
    assert page.attr("aria-invalid", "select#sub_1_destination") == "true"
    assert page.attr("value", "select#sub_1_destination option[selected]") == "nowhere"
    assert not page.has("#sub_0_destination-error")
    assert stage.api.get("/api/v1/jobs/orders").json()["spec"]["notifications"] == []

    no_events = browser.submit(
        "/jobs/orders/notifications",
        {"resource_version": "1", "sub_0_destination": "ops-hook"},
    )
    assert no_events.status_code == 422
    assert parse(no_events).text("#sub_0_events-error")


def test_a_stale_version_is_refused_with_the_choice_kept(browser: Browser) -> None:
    stage = browser.stage
    add_destination(stage, "ops-hook")
    a_job(stage)
    a_job(stage, notifications=[{"destination": "ops-hook", "events": ["completed"]}])
    refused = browser.submit(
        "/jobs/orders/notifications",
        {"resource_version": "1", "sub_0_destination": "ops-hook", "sub_0_events": ["failed"]},
    )
    assert refused.status_code == 409
    page = parse(refused)
    assert "Nothing was saved" in page.text("#notifications-problems")
    assert page.has("input#sub_0_events-failed[checked]")
    assert page.texts("#subscriptions-table tbody td") == ["completed", "every rule"]


def test_rule_states_of_the_live_application_are_shown(browser: Browser) -> None:
    stage = browser.stage
    a_job(stage)
    application = stage.api.post("/api/v1/jobs/orders/run").json()
    since = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
    with stage.services.store.transaction() as repos:
        repos.health.put(
            application["id"],
            "lagging",
            RuleState(holding_since=since, firing_since=since, last_value=9000.0, judged_at=since),
        )
    page = parse(browser.page("/jobs/orders?tab=notifications"))
    lagging = page.one("tr[data-rule=lagging] td.rule-standing")
    assert lagging.attr("data-standing") == "firing"
    assert "Firing since 2026-11-26 09:30:00" in lagging.text()
    assert page.attr("data-standing", "tr[data-rule=stalled] td.rule-standing") == "waiting"


def test_who_may_not_configure_the_job_sees_no_form(browser: Browser) -> None:
    stage = browser.stage
    a_job(stage)
    add_user(stage, "viewer", bundle="default", permissions=[Permission.VIEW])
    viewer = signed_in(stage, "viewer")
    try:
        page = parse(viewer.page("/jobs/orders?tab=notifications"))
        assert not page.has("#notifications-form")
        assert "UPDATE" in page.text("#notifications-refused")
        refused = viewer.submit(
            "/jobs/orders/notifications",
            {"resource_version": "1", "sub_0_destination": "x", "sub_0_events": ["failed"]},
        )
        assert refused.status_code == 403
    finally:
        viewer.client.close()


def test_health_events_show_as_a_warning_and_information_on_the_application_page(
    browser: Browser,
) -> None:
    stage = browser.stage
    application_id = started(browser)
    with stage.services.store.transaction() as repos:
        for kind, message in (
            ("health-firing", "rule lagging fired: recordsBehind 9000 > 5000 for 60 s"),
            ("health-recovered", "rule lagging recovered: recordsBehind 12 <= 5000"),
        ):
            repos.applications.add_event(
                application_id, at=stage.services.clock.now(), kind=kind, message=message
            )
    page = page_of(browser, f"/applications/{application_id}?tab=events")
    levels = {
        row.text(".event-kind"): row.attr("data-level")
        for row in page.all("#events-body tr[data-event]")
    }
    assert levels["health-firing"] == "warning"
    assert levels["health-recovered"] == "info"
