"""Settings -> Notifications over HTTP against a real server: the destinations list, a
destination's page with its deliveries, Send test to a real HTTP receiver (and to one that
cannot be reached), creating and editing as YAML with errors at their line, a delete refused
while a job subscribes, and what those who do not manage bundles see."""

from __future__ import annotations

import json

import yaml

from streamjobs.domain.access import Permission
from streamjobs.launch.ports import free_loopback_port
from tests.factories import pipeline_manifest
from tests.notify_receivers import http_receiver
from tests.web.access_helpers import add_user, signed_in
from tests.web.conftest import Browser
from tests.web.html import parse


def webhook_yaml(name: str, url: str, **spec: object) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "streamjobs.io/v1",
            "kind": "NotificationDestination",
            "metadata": {"name": name, "description": "Alerts for ops"},
            "spec": {"type": "webhook", "url": url, **spec},
        }
    )


def test_create_send_test_and_see_the_delivery(browser: Browser) -> None:
    new_page = parse(browser.page("/settings/notifications/new"))
    assert "kind: NotificationDestination" in new_page.text("textarea#manifest")
    with http_receiver() as receiver:
        created = browser.submit(
            "/settings/notifications/new", {"manifest": webhook_yaml("ops-hook", receiver.url)}
        )
        assert created.status_code == 303, created.text
        assert created.headers["location"] == "/settings/notifications/ops-hook?done=created"

        listing = parse(browser.page("/settings/notifications"))
        row = listing.one("tr[data-destination=ops-hook]")
        assert row.text("[data-cell=type]") == "webhook"
        assert row.text("[data-cell=where]") == receiver.url
        assert row.text("[data-cell=health]") == "Healthy"
        assert row.text("[data-cell=last]") == "none yet"
        assert listing.has("a#new-destination")
        assert "/settings/notifications" in [a.attr("href") for a in listing.all("header nav a")]

        tested = browser.submit("/settings/notifications/ops-hook/test", {})
        assert tested.status_code == 303, tested.text
        assert tested.headers["location"] == "/settings/notifications/ops-hook?done=tested"
        page = parse(browser.page(tested.headers["location"]))
        assert page.text("#destination-notice") == (
            "Test notification to “ops-hook” delivered: its answer is under Recent deliveries."
        )
        assert page.text("[data-fact=config]") == f"url = {receiver.url}"
        assert len(receiver.requests) == 1
        body = json.loads(receiver.requests[0].body)
        assert "ops-hook" in json.dumps(body)

        delivery = page.one("#deliveries-table tbody tr[data-delivery]")
        assert delivery.attr("data-state") == "delivered"
        assert delivery.text("[data-cell=event]") == "test"
        assert delivery.text("[data-cell=job]") == "test"
        assert delivery.text("[data-cell=outcome]").startswith("delivered")
        assert delivery.text("[data-cell=response]") == "HTTP 200"
        assert delivery.text("[data-cell=attempts]") == "1"

        listing = parse(browser.page("/settings/notifications"))
        assert "delivered" in listing.text("tr[data-destination=ops-hook] [data-cell=last]")


def test_send_test_to_an_unreachable_receiver_says_why(browser: Browser) -> None:
    url = f"http://127.0.0.1:{free_loopback_port()}/hook"
    created = browser.submit("/settings/notifications/new", {"manifest": webhook_yaml("dead", url)})
    assert created.status_code == 303, created.text
    refused = browser.submit("/settings/notifications/dead/test", {})
    assert refused.status_code == 409
    page = parse(refused)
    reason = page.text("#test-failure")
    assert reason.startswith("The test notification was not delivered:")
    assert "127.0.0.1" in reason
    delivery = page.one("#deliveries-table tbody tr[data-delivery]")
    assert delivery.attr("data-state") == "failed"
    assert delivery.text("[data-cell=response]")


def test_a_receiver_answering_500_is_a_failed_test_with_its_status(browser: Browser) -> None:
    with http_receiver(status=500, reply=b"boom") as receiver:
        browser.submit(
            "/settings/notifications/new", {"manifest": webhook_yaml("flaky", receiver.url)}
        )
        refused = browser.submit("/settings/notifications/flaky/test", {})
    assert refused.status_code == 409
    page = parse(refused)
    assert "500" in page.text("#test-failure")
    assert "HTTP 500" in page.text("#deliveries-table [data-cell=response]")


def test_yaml_errors_are_shown_at_their_line_and_nothing_is_saved(browser: Browser) -> None:
    text = webhook_yaml("ops-hook", "ftp://example.com/x")
    refused = browser.submit("/settings/notifications/new", {"manifest": text})
    assert refused.status_code == 422
    page = parse(refused)
    errors = page.text("#manifest-error")
    assert "spec.url" in errors
    assert "is not an http or https URL" in errors
    line = text.splitlines().index("  url: ftp://example.com/x") + 1
    assert page.text("#manifest-error a.line") == f"Line {line}"
    assert page.has("#manifest-error a.line")
    assert page.attr("aria-invalid", "textarea#manifest") == "true"
    assert parse(browser.page("/settings/notifications")).text("tbody") == (
        "No notification destinations yet."
    )
    unreadable = browser.submit("/settings/notifications/new", {"manifest": "spec: [unclosed"})
    assert unreadable.status_code == 422
    assert parse(unreadable).text("#manifest-error")


def test_edit_as_yaml_saves_a_new_version_and_refuses_a_stale_one(browser: Browser) -> None:
    browser.submit(
        "/settings/notifications/new",
        {"manifest": webhook_yaml("ops-hook", "http://127.0.0.1:9/a")},
    )
    editor = parse(browser.page("/settings/notifications/ops-hook/yaml"))
    manifest_text = editor.one("textarea#manifest").tag.get_text().lstrip("\n")
    assert yaml.safe_load(manifest_text)["metadata"]["resourceVersion"] == "1"
    changed = manifest_text.replace("http://127.0.0.1:9/a", "http://127.0.0.1:9/b")
    saved = browser.submit("/settings/notifications/ops-hook/yaml", {"manifest": changed})
    assert saved.status_code == 303, saved.text
    assert saved.headers["location"] == "/settings/notifications/ops-hook?done=saved"
    page = parse(browser.page(saved.headers["location"]))
    assert page.text("#destination-notice") == "Destination “ops-hook” saved."
    assert page.text("[data-fact=version]") == "2"
    stale = browser.submit("/settings/notifications/ops-hook/yaml", {"manifest": changed})
    assert stale.status_code == 409
    assert "Nothing was saved" in parse(stale).text("#form-problems")


def test_delete_is_refused_while_a_job_subscribes(browser: Browser) -> None:
    stage = browser.stage
    browser.submit(
        "/settings/notifications/new",
        {"manifest": webhook_yaml("ops-hook", "http://127.0.0.1:9/a")},
    )
    subscribed = pipeline_manifest(
        "orders", notifications=[{"destination": "ops-hook", "events": ["failed"]}]
    )
    stage.api.put("/api/v1/jobs/orders", json=subscribed).raise_for_status()
    listing = parse(browser.page("/settings/notifications"))
    assert listing.text("tr[data-destination=ops-hook] [data-cell=jobs]") == "orders"
    page = parse(browser.page("/settings/notifications/ops-hook"))
    assert page.texts("#destination-subscribers li") == ["orders"]
    assert "1 job: 'orders'" in (page.attr("title", "button#delete-destination-refused") or "")
    assert not page.has("dialog#delete-destination")
    refused = browser.submit("/settings/notifications/ops-hook/delete", {"version": "1"})
    assert refused.status_code == 409
    assert "'orders'" in parse(refused).text("#destination-error")
    assert browser.page("/settings/notifications/ops-hook").status_code == 200

    stage.api.put("/api/v1/jobs/orders", json=pipeline_manifest("orders")).raise_for_status()
    deleted = browser.submit("/settings/notifications/ops-hook/delete", {"version": "1"})
    assert deleted.status_code == 303
    assert deleted.headers["location"] == "/settings/notifications?done=deleted&name=ops-hook"
    listing = parse(browser.page(deleted.headers["location"]))
    assert listing.text("p.notice") == "Destination “ops-hook” deleted."
    assert not listing.has("tr[data-destination=ops-hook]")
    assert browser.page("/settings/notifications/ops-hook").status_code == 404


def test_those_who_do_not_manage_bundles_read_but_see_no_write_actions(browser: Browser) -> None:
    stage = browser.stage
    browser.submit(
        "/settings/notifications/new",
        {"manifest": webhook_yaml("ops-hook", "http://127.0.0.1:9/a")},
    )
    add_user(stage, "author", bundle="default", permissions=[Permission.UPDATE])
    author = signed_in(stage, "author")
    try:
        listing = parse(author.page("/settings/notifications"))
        assert listing.has("tr[data-destination=ops-hook]")
        assert not listing.has("a#new-destination")
        assert listing.has("button#new-destination-refused[disabled]")
        page = parse(author.page("/settings/notifications/ops-hook"))
        assert page.has("button#send-test-refused[disabled]")
        assert not page.has("form[action$='/test']")
        assert not page.has("#deliveries-table")
        assert page.has("#deliveries-refused")
        assert author.page("/settings/notifications/new").status_code == 403
        assert author.submit("/settings/notifications/ops-hook/test", {}).status_code == 403
        assert author.submit("/settings/notifications/ops-hook/delete", {}).status_code == 403
        assert browser.page("/settings/notifications/ops-hook").status_code == 200
    finally:
        author.client.close()


def test_changes_without_the_csrf_token_are_refused(browser: Browser) -> None:
    browser.submit(
        "/settings/notifications/new",
        {"manifest": webhook_yaml("ops-hook", "http://127.0.0.1:9/a")},
    )
    for path in (
        "/settings/notifications/ops-hook/test",
        "/settings/notifications/ops-hook/delete",
    ):
        assert browser.client.post(path, data={}).status_code == 403, path


def test_each_type_says_where_it_sends_and_a_missing_secret_is_warned_of(
    browser: Browser,
) -> None:
    documents = {
        "ops-mail": {
            "type": "email",
            "host": "smtp.example.com",
            "from": "streamjobs@example.com",
            "to": ["ops@example.com", "data@example.com"],
        },
        "ops-slack": {"type": "slack", "urlSecret": "slack-ops-url"},
    }
    for name, spec in documents.items():
        text = yaml.safe_dump(
            {
                "apiVersion": "streamjobs.io/v1",
                "kind": "NotificationDestination",
                "metadata": {"name": name},
                "spec": spec,
            }
        )
        created = browser.submit("/settings/notifications/new", {"manifest": text})
        assert created.status_code == 303, created.text
    listing = parse(browser.page("/settings/notifications"))
    assert listing.text("tr[data-destination=ops-mail] [data-cell=where]") == (
        "smtp.example.com:587 → ops@example.com, data@example.com"
    )
    assert listing.text("tr[data-destination=ops-slack] [data-cell=where]") == (
        "secret slack-ops-url"
    )
    slack = parse(browser.page("/settings/notifications/ops-slack"))
    assert "slack-ops-url" in slack.text("#missing-secrets")
    assert slack.text("[data-fact=secrets]") == "slack-ops-url"
    mail = parse(browser.page("/settings/notifications/ops-mail"))
    assert not mail.has("#missing-secrets")
    assert "to = ops@example.com, data@example.com" in mail.text("[data-fact=config]")

    put = browser.stage.api.put(
        "/api/v1/bundles/default/secrets/slack-ops-url", json={"value": "http://127.0.0.1:9/x"}
    )
    assert put.status_code == 201, put.text
    assert not parse(browser.page("/settings/notifications/ops-slack")).has("#missing-secrets")
