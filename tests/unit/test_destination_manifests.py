"""The NotificationDestination manifest's rules: each type's fields, no credentials in clear,
and every broken rule at its field path."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.destinations import (
    destination_json_schema,
    destination_manifest,
    parse_destination,
)
from streamjobs.domain.errors import InvalidInput

EMAIL = {
    "type": "email",
    "host": "smtp.example.com",
    "from": "streamjobs@example.com",
    "to": ["ops@example.com"],
}


def errors_of(spec: dict[str, Any], name: str = "ops") -> dict[str, str]:
    with pytest.raises(InvalidInput) as refused:
        parse_destination(destination_manifest(name, spec))
    return {error.path: error.message for error in refused.value.errors}


def test_an_email_destination_fills_in_starttls_and_its_port() -> None:
    parsed = parse_destination(
        destination_manifest("ops", EMAIL | {"user": "alerts", "passwordSecret": "smtp-pw"})
    )
    assert parsed.config() == {
        "host": "smtp.example.com",
        "port": 587,
        "security": "starttls",
        "user": "alerts",
        "passwordSecret": "smtp-pw",
        "from": "streamjobs@example.com",
        "to": ["ops@example.com"],
    }
    assert parsed.secret_names() == ("smtp-pw",)
    assert parsed.spec.bundle == "default"


@pytest.mark.parametrize(("security", "port"), [("tls", 465), ("none", 25)])
def test_each_security_has_its_default_port(security: str, port: int) -> None:
    parsed = parse_destination(destination_manifest("ops", EMAIL | {"security": security}))
    assert parsed.config()["port"] == port


def test_a_webhook_keeps_its_headers_and_names_its_secrets() -> None:
    spec = {
        "type": "webhook",
        "url": "https://hooks.example.com/in?team=payments",
        "signingSecret": "hook-key",
        "headers": {"X-Team": "payments"},
        "headerSecrets": {"Authorization": "hook-token"},
    }
    parsed = parse_destination(destination_manifest("hook", spec))
    assert parsed.secret_names() == ("hook-key", "hook-token")
    assert parsed.config()["headers"] == {"X-Team": "payments"}


@pytest.mark.parametrize(
    ("spec", "path", "words"),
    [
        ({"type": "pager"}, "spec.type", "must be 'email', 'webhook' or 'slack'"),
        (EMAIL | {"port": 70000}, "spec.port", "less than or equal to 65535"),
        (EMAIL | {"port": 0}, "spec.port", "greater than or equal to 1"),
        (EMAIL | {"security": "ssl"}, "spec.security", "'none', 'starttls' or 'tls'"),
        (EMAIL | {"to": ["not an address"]}, "spec.to[0]", "not a valid email address"),
        (EMAIL | {"to": []}, "spec.to", "at least one address"),
        (EMAIL | {"user": "alerts"}, "spec.passwordSecret", "required with user"),
        (EMAIL | {"passwordSecret": "pw"}, "spec.user", "required with passwordSecret"),
        (EMAIL | {"password": "hunter2"}, "spec.password", "is not a field here"),
        ({"type": "email", "host": "h"}, "spec.from", "needs from"),
        (EMAIL | {"url": "https://x.example"}, "spec.url", "for webhook destinations only"),
        ({"type": "webhook"}, "spec.url", "needs url"),
        ({"type": "webhook", "url": "ftp://x.example/in"}, "spec.url", "not an http or https"),
        ({"type": "webhook", "url": "hooks.example.com"}, "spec.url", "not an http or https"),
        ({"type": "webhook", "url": "https://u:p@x.example"}, "spec.url", "user or password"),
        ({"type": "webhook", "url": "https://x.example/?token=abc"}, "spec.url", "credential"),
        ({"type": "webhook", "url": "https://x.example:99999/"}, "spec.url", "bad port"),
        ({"type": "slack"}, "spec.urlSecret", "needs urlSecret"),
        (
            {"type": "webhook", "url": "https://x.example", "headers": {"X-Team": "équipe"}},
            "spec.headers.X-Team",
            "not a valid HTTP header value",
        ),
        ({"type": "slack", "urlSecret": "s", "url": "https://x.example"}, "spec.url", "webhook"),
    ],
)
def test_bad_fields_are_refused_at_their_path(spec: dict[str, Any], path: str, words: str) -> None:
    errors = errors_of(spec)
    assert path in errors, errors
    assert words in errors[path]


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key", "X-Auth-Token", "Cookie"])
def test_a_header_carrying_a_credential_in_clear_is_refused(header: str) -> None:
    spec = {"type": "webhook", "url": "https://x.example", "headers": {header: "Bearer abc"}}
    errors = errors_of(spec)
    assert list(errors) == [f"spec.headers.{header}"]
    assert "give it in headerSecrets as a secret name" in errors[f"spec.headers.{header}"]


def test_headers_the_sender_sets_and_headers_given_twice_are_refused() -> None:
    spec = {
        "type": "webhook",
        "url": "https://x.example",
        "headers": {"Content-Type": "text/plain", "X-Team": "a"},
        "headerSecrets": {"X-Streamjobs-Signature": "s", "x-team": "t"},
    }
    errors = errors_of(spec)
    assert set(errors) == {
        "spec.headers.Content-Type",
        "spec.headerSecrets.X-Streamjobs-Signature",
        "spec.headerSecrets.x-team",
    }


def test_control_characters_and_bad_names_are_refused_at_their_path() -> None:
    errors = errors_of({"type": "slack", "urlSecret": "slack\x00url"})
    assert "U+0000" in errors["spec.urlSecret"]
    errors = errors_of({"type": "slack", "urlSecret": "s"}, name="Ops Team")
    assert "not a valid destination name" in errors["metadata.name"]


def test_the_json_schema_names_the_kind_and_its_fields() -> None:
    schema = destination_json_schema()
    assert schema["title"] == "NotificationDestination"
    spec = schema["$defs"]["DestinationSpec"]["properties"]
    assert {"type", "bundle", "host", "from", "url", "headerSecrets", "urlSecret"} <= set(spec)
