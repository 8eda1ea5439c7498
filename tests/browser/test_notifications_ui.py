"""Notifications in a real browser: a webhook destination created in Settings -> Notifications,
its Send test delivered to a real HTTP receiver (and the delivery shown on its page), a job
subscribed to it in the job page's Notifications tab, and a health rule added in the job form
(a negative duration first, refused at its field)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import field_error, manifest, unlabelled_controls
from tests.notify_receivers import http_receiver

pytestmark = pytest.mark.browser

DESTINATION = "browser-hook"
JOB = "browser-notified"


def destination_yaml(url: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "streamjobs.io/v1",
            "kind": "NotificationDestination",
            "metadata": {"name": DESTINATION, "description": "made by the browser tests"},
            "spec": {"type": "webhook", "url": url, "headers": {"X-Team": "data"}},
        },
        sort_keys=False,
    )


def test_destination_send_test_subscription_and_health_rule(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    # Settings -> Notifications, New destination as YAML.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Notifications").click()
    expect(page).to_have_url(f"{server.url}/settings/notifications")
    page.get_by_role("link", name="New destination").click()
    editor = page.get_by_label("Manifest (YAML)")
    expect(editor).to_have_value(re.compile("kind: NotificationDestination"))
    assert unlabelled_controls(page) == []

    with http_receiver() as receiver:
        editor.fill(destination_yaml(receiver.url))
        page.get_by_role("button", name="Create").click()
        expect(page).to_have_url(
            re.compile(rf"/settings/notifications/{DESTINATION}\?done=created$")
        )
        expect(page.locator("[data-fact=where]")).to_have_text(receiver.url)

        # Send test: delivered to the receiver, and shown among the deliveries.
        page.get_by_role("button", name="Send test").click()
        expect(page.locator("#destination-notice")).to_contain_text(
            f"Test notification to “{DESTINATION}” delivered"
        )
        expect(page.locator("[data-fact=config]")).to_contain_text("headers = X-Team: data")
        delivery = page.locator("#deliveries-table tbody tr[data-delivery]").first
        expect(delivery).to_have_attribute("data-state", "delivered")
        expect(delivery.locator("[data-cell=response]")).to_have_text("HTTP 200")
        screenshot(page, "notification-destination-tested")
    assert len(receiver.requests) == 1
    assert receiver.requests[0].headers["x-team"] == "data"
    assert DESTINATION in json.dumps(json.loads(receiver.requests[0].body))

    page.goto("/settings/notifications")
    row = page.locator(f"tr[data-destination='{DESTINATION}']")
    expect(row.locator("[data-cell=health]")).to_have_text("Healthy")
    expect(row.locator("[data-cell=last]")).to_contain_text("delivered")
    screenshot(page, "notification-destinations")

    # The job's Notifications tab: subscribe it to the destination.
    created = server_api.post("/api/v1/jobs", json=manifest(JOB, server.work / JOB))
    assert created.status_code == 201, created.text
    page.goto(f"/jobs/{JOB}")
    page.get_by_role("tab", name="Notifications").click()
    panel = page.locator("#panel-notifications")
    expect(panel).to_be_visible()
    expect(panel.locator("#subscriptions-table")).to_contain_text("Nobody is notified")
    assert unlabelled_controls(page) == []
    panel.get_by_label("Destination").select_option(DESTINATION)
    panel.get_by_label("failed", exact=True).check()
    panel.get_by_label("suspended", exact=True).check()
    panel.get_by_role("button", name="Save subscriptions").click()
    expect(page).to_have_url(f"{server.url}/jobs/{JOB}?tab=notifications")
    subscriptions = page.locator("#subscriptions-table tbody tr")
    expect(subscriptions).to_have_count(1)
    expect(subscriptions.first).to_contain_text(DESTINATION)
    expect(subscriptions.first).to_contain_text("failed, suspended")
    screenshot(page, "job-notifications-tab")
    job = server_api.get(f"/api/v1/jobs/{JOB}").json()
    assert job["spec"]["notifications"] == [
        {"destination": DESTINATION, "events": ["failed", "suspended"], "rules": []}
    ]

    # The job form: a health rule, a negative duration refused at its field first.
    page.get_by_role("link", name="the job form").click()
    section = page.locator("#health-rules")
    assert unlabelled_controls(page) == []
    section.locator("#rule_0_name").fill("stalled")
    section.locator("#rule_0_metric").select_option("stalledSeconds")
    section.locator("#rule_0_threshold").fill("300")
    section.locator("#rule_0_duration").fill("-5")
    section.locator("#rule_0_actions-restart").check()
    section.get_by_role("button", name="Add rule").click()
    expect(section.locator("[data-rule-row]")).to_have_count(2)
    page.get_by_role("button", name="Save", exact=True).click()
    duration = page.locator("#rule_0_duration")
    expect(duration).to_have_attribute("aria-invalid", "true")
    expect(field_error(duration)).to_contain_text("greater than or equal to 0")
    screenshot(page, "job-form-health-rule-error")
    assert server_api.get(f"/api/v1/jobs/{JOB}").json()["spec"]["health"]["rules"] == []

    duration.fill("60")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page).to_have_url(f"{server.url}/jobs/{JOB}")
    rules = server_api.get(f"/api/v1/jobs/{JOB}").json()["spec"]["health"]["rules"]
    assert [(r["name"], r["durationSeconds"], r["actions"]) for r in rules] == [
        ("stalled", 60, ["notify", "restart"])
    ]
    page.get_by_role("tab", name="Notifications").click()
    rule = page.locator("#health-rules-table tr[data-rule=stalled]")
    expect(rule).to_contain_text("stalledSeconds > 300")
    expect(rule.locator("td.rule-standing")).to_have_text("No live application")
    screenshot(page, "job-notifications-health-rules")

    # Subscriptions stay as they were through the form's save.
    job = server_api.get(f"/api/v1/jobs/{JOB}").json()
    assert [s["destination"] for s in job["spec"]["notifications"]] == [DESTINATION]
    assert server_api.delete(f"/api/v1/jobs/{JOB}").status_code in {202, 204}
