"""The /api/v1/notification-destinations routes over real HTTP, with real receivers: the happy
paths, "send test" to a real SMTP server and a real webhook (and its refusals, with the reason),
the deliveries it records, every kind of bad input, and destinations kept consistent with the
jobs whose spec.notifications name them."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

import httpx
import pytest
import yaml

from streamjobs.domain.destinations import destination_manifest
from streamjobs.launch.ports import free_loopback_port
from tests.api.problems import error_paths, problem_of
from tests.factories import console_manifest
from tests.notify_receivers import email_spec, http_receiver, smtp_receiver

DESTINATIONS = "/api/v1/notification-destinations"
SECRETS = "/api/v1/bundles/default/secrets"
JOBS = "/api/v1/jobs"


@pytest.fixture
def name() -> str:
    """A destination name no other test uses, since the server is shared."""
    return f"d-{uuid.uuid4().hex[:10]}"


def create(api: httpx.Client, name: str, spec: dict[str, Any]) -> httpx.Response:
    return api.post(DESTINATIONS, json=destination_manifest(name, spec))


def put_secret(api: httpx.Client, name: str, value: str) -> None:
    api.put(f"{SECRETS}/{name}", json={"value": value}).raise_for_status()


def test_create_then_get_list_and_read_back_as_yaml(api: httpx.Client, name: str) -> None:
    spec = {"type": "webhook", "url": "https://hooks.example.com/in", "signingSecret": "hk"}
    created = create(api, name, spec)
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"{DESTINATIONS}/{name}"
    assert created.headers["etag"] == '"1"'
    got = api.get(f"{DESTINATIONS}/{name}").json()
    assert got["kind"] == "NotificationDestination"
    assert got["spec"]["url"] == "https://hooks.example.com/in"
    assert got["metadata"]["resourceVersion"] == "1"
    assert got["status"] == {"healthy": True, "consecutiveFailures": 0, "secretNames": ["hk"]}
    listed = api.get(DESTINATIONS, params={"type": "webhook"}).json()["items"]
    assert name in [item["metadata"]["name"] for item in listed]
    assert name not in [
        item["metadata"]["name"]
        for item in api.get(DESTINATIONS, params={"type": "slack"}).json()["items"]
    ]


def test_apply_as_yaml_creates_then_is_unchanged_then_configures(
    api: httpx.Client, name: str
) -> None:
    manifest = destination_manifest(name, {"type": "slack", "urlSecret": "slack-url"})
    first = api.put(
        f"{DESTINATIONS}/{name}",
        content=yaml.safe_dump(manifest),
        headers={"Content-Type": "application/yaml"},
    )
    assert (first.status_code, first.json()["result"]) == (201, "created"), first.text
    printed = api.get(f"{DESTINATIONS}/{name}").json()
    again = api.put(f"{DESTINATIONS}/{name}", json=printed)
    assert (again.status_code, again.json()["result"]) == (200, "unchanged")
    manifest["spec"]["urlSecret"] = "other-url"
    changed = api.put(f"{DESTINATIONS}/{name}", json=manifest)
    assert changed.json()["result"] == "configured"
    assert changed.json()["destination"]["metadata"]["resourceVersion"] == "2"
    stale = api.put(
        f"{DESTINATIONS}/{name}", json=printed | {"spec": manifest["spec"] | {"urlSecret": "x"}}
    )
    assert problem_of(stale, 409)["detail"]


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"type": "pager"}, "spec.type"),
        (
            {"type": "email", "host": "h", "port": 99999, "from": "a@b.c", "to": ["o@b.c"]},
            "spec.port",
        ),
        ({"type": "webhook", "url": "file:///etc/passwd"}, "spec.url"),
        (
            {
                "type": "webhook",
                "url": "https://x.example",
                "headers": {"Authorization": "Bearer t"},
            },
            "spec.headers.Authorization",
        ),
        ({"type": "slack", "urlSecret": "s", "bundle": "no-such-bundle"}, "spec.bundle"),
        ({"type": "slack", "urlSecret": "slack\u0007url"}, "spec.urlSecret"),
    ],
)
def test_bad_manifests_are_422_at_their_field(
    api: httpx.Client, name: str, spec: dict[str, Any], path: str
) -> None:
    assert error_paths(create(api, name, spec)) == [path]
    assert api.get(f"{DESTINATIONS}/{name}").status_code == 404


def test_a_name_that_differs_from_the_url_and_a_body_that_is_not_a_manifest(
    api: httpx.Client, name: str
) -> None:
    manifest = destination_manifest(name, {"type": "slack", "urlSecret": "s"})
    assert error_paths(api.put(f"{DESTINATIONS}/other-{name}", json=manifest)) == ["metadata.name"]
    assert problem_of(
        api.post(DESTINATIONS, content=b"{", headers={"Content-Type": "application/json"}), 400
    )
    assert problem_of(api.get(DESTINATIONS, params={"type": "pager"}), 422)


def test_send_test_delivers_an_email_and_records_it(api: httpx.Client, name: str) -> None:
    with smtp_receiver() as receiver:
        assert create(api, name, email_spec(receiver.port)).status_code == 201
        tested = api.post(f"{DESTINATIONS}/{name}/test")
    assert tested.status_code == 200, tested.text
    assert tested.json()["delivery"]["state"] == "delivered"
    [mail] = receiver.messages
    assert mail.recipients == ["ops@example.com"]
    assert "Test notification from streamjobs" in mail.message.get_content()
    [delivery] = api.get(f"{DESTINATIONS}/{name}/deliveries").json()["items"]
    assert (delivery["event"], delivery["state"], delivery["attempts"]) == ("test", "delivered", 1)
    assert delivery["job"] is None


def test_send_test_signs_a_webhook_with_its_secret(api: httpx.Client, name: str) -> None:
    secret = f"key-{name}"
    put_secret(api, secret, "signing-key")
    with http_receiver() as receiver:
        spec = {"type": "webhook", "url": receiver.url, "signingSecret": secret}
        create(api, name, spec).raise_for_status()
        tested = api.post(f"{DESTINATIONS}/{name}/test")
    assert tested.status_code == 200, tested.text
    [request] = receiver.requests
    digest = hmac.new(b"signing-key", request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-streamjobs-signature"] == f"sha256={digest}"
    assert request.headers["x-streamjobs-delivery"] == str(tested.json()["delivery"]["id"])
    assert json.loads(request.body)["application"] is None
    assert tested.json()["delivery"]["responseStatus"] == 200


def test_send_test_to_an_unreachable_host_is_refused_with_the_reason(
    api: httpx.Client, name: str
) -> None:
    create(api, name, email_spec(25, host="smtp.invalid")).raise_for_status()
    refused = problem_of(api.post(f"{DESTINATIONS}/{name}/test"), 409)
    assert refused["title"] == "Test delivery failed"
    [error] = refused["errors"]
    assert error["path"] == "spec.host"
    assert error["message"].startswith("could not connect to smtp.invalid:25: ")
    assert error["message"] in refused["detail"]
    [delivery] = api.get(f"{DESTINATIONS}/{name}/deliveries").json()["items"]
    assert delivery["state"] == "failed"
    assert delivery["lastError"] == error["message"]


def test_send_test_to_a_closed_port_says_connection_refused(api: httpx.Client, name: str) -> None:
    port = free_loopback_port()
    create(api, name, email_spec(port)).raise_for_status()
    refused = problem_of(api.post(f"{DESTINATIONS}/{name}/test"), 409)
    assert (
        refused["errors"][0]["message"]
        == f"could not connect to 127.0.0.1:{port}: Connection refused"
    )


def test_send_test_with_a_missing_secret_names_it(api: httpx.Client, name: str) -> None:
    create(api, name, {"type": "slack", "urlSecret": f"absent-{name}"}).raise_for_status()
    refused = problem_of(api.post(f"{DESTINATIONS}/{name}/test"), 409)
    assert refused["errors"] == [
        {
            "path": "spec.urlSecret",
            "message": f"secret 'absent-{name}' (spec.urlSecret) is not in bundle 'default'",
        }
    ]


def test_send_test_to_a_webhook_answering_500_is_refused_with_its_answer(
    api: httpx.Client, name: str
) -> None:
    with http_receiver(status=500, reply=b"boom") as receiver:
        create(api, name, {"type": "webhook", "url": receiver.url}).raise_for_status()
        refused = problem_of(api.post(f"{DESTINATIONS}/{name}/test"), 409)
    assert refused["errors"][0] == {
        "path": "spec.url",
        "message": f"{receiver.url} answered HTTP 500: boom",
    }
    [delivery] = api.get(f"{DESTINATIONS}/{name}/deliveries").json()["items"]
    assert delivery["responseStatus"] == 500


def test_unknown_destinations_are_404(api: httpx.Client, name: str) -> None:
    for response in (
        api.get(f"{DESTINATIONS}/{name}"),
        api.post(f"{DESTINATIONS}/{name}/test"),
        api.get(f"{DESTINATIONS}/{name}/deliveries"),
        api.delete(f"{DESTINATIONS}/{name}"),
    ):
        problem_of(response, 404)
    assert error_paths(api.get(f"{DESTINATIONS}/{name}/deliveries", params={"limit": 0})) == [
        "query.limit"
    ]


def test_a_job_naming_a_missing_destination_is_refused_at_its_subscription(
    api: httpx.Client, name: str, job_name: str
) -> None:
    manifest = console_manifest(
        job_name, notifications=[{"destination": name, "events": ["failed"]}]
    )
    refused = api.post(JOBS, json=manifest)
    assert error_paths(refused) == ["spec.notifications[0].destination"]
    assert name in problem_of(refused, 422)["detail"]


def test_a_destination_a_job_names_cannot_be_deleted(
    api: httpx.Client, name: str, job_name: str
) -> None:
    create(api, name, {"type": "slack", "urlSecret": "slack-url"}).raise_for_status()
    manifest = console_manifest(
        job_name, notifications=[{"destination": name, "events": ["failed", "suspended"]}]
    )
    assert api.post(JOBS, json=manifest).status_code == 201
    refused = problem_of(api.delete(f"{DESTINATIONS}/{name}"), 409)
    assert job_name in refused["detail"]
    assert api.get(f"{DESTINATIONS}/{name}").status_code == 200
    assert api.delete(f"{JOBS}/{job_name}").status_code in (200, 202, 204)
    assert api.delete(f"{DESTINATIONS}/{name}").status_code == 204
    assert api.get(f"{DESTINATIONS}/{name}").status_code == 404


def test_the_openapi_document_describes_the_routes_and_the_manifest(api: httpx.Client) -> None:
    document = api.get("/api/v1/openapi.json").json()
    assert {"get", "post"} <= set(document["paths"][DESTINATIONS])
    assert {"get", "put", "delete"} <= set(document["paths"][f"{DESTINATIONS}/{{name}}"])
    assert "post" in document["paths"][f"{DESTINATIONS}/{{name}}/test"]
    assert "NotificationDestination" in document["components"]["schemas"]
    schema = api.get("/api/v1/schema/notificationdestination.json").json()
    assert schema["title"] == "NotificationDestination"
