"""The senders against real receivers: an SMTP server (plain, STARTTLS, TLS, with a login) and
an HTTP receiver that checks the HMAC signature and the headers; and each failure's reason."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from streamjobs.domain.alerts import NotificationEvent
from streamjobs.domain.destinations import destination_manifest, parse_destination
from streamjobs.domain.notices import Notice
from streamjobs.launch.ports import free_loopback_port
from streamjobs.notify.layouts import slack_body
from streamjobs.notify.senders import (
    DeliveryFailed,
    EmailSender,
    SlackSender,
    WebhookSender,
    sender_for,
)
from streamjobs.store.destinations import DestinationRecord
from tests.notify_receivers import (
    Certificate,
    email_spec,
    http_receiver,
    self_signed_certificate,
    smtp_receiver,
)

AT = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
NOTICE = Notice(
    event=NotificationEvent.FAILED,
    job="orders-to-lake",
    at=AT,
    message="attempt 3 failed: KeyError: 'x'",
    application_id="app-1",
    bundle="payments",
    attempt=3,
    figures={"recordsBehind": 1200, "inputRowsPerSecond": 12.5},
    link="https://streamjobs.example/applications/app-1",
)


def destination(spec: Mapping[str, Any], name: str = "ops") -> DestinationRecord:
    """The record the store would keep for a destination with ``spec``."""
    parsed = parse_destination(destination_manifest(name, spec))
    return DestinationRecord(
        name=name,
        kind=parsed.spec.type.value,
        bundle=parsed.spec.bundle,
        description=None,
        config=parsed.config(),
        secret_names=parsed.secret_names(),
        healthy=True,
        consecutive_failures=0,
        manifest=parsed.model_dump(by_alias=True, mode="json"),
        version=1,
        created_by="alice",
        created_at=AT,
        updated_by="alice",
        updated_at=AT,
    )


def email(port: int, **extra: Any) -> DestinationRecord:
    return destination(
        email_spec(port, **{"to": ["ops@example.com", "oncall@example.com"]} | extra)
    )


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def starttls_login(port: int) -> DestinationRecord:
    """An email destination on ``port`` of localhost over STARTTLS, logging in as alerts."""
    return email(
        port, host="localhost", security="starttls", user="alerts", passwordSecret="smtp-password"
    )


def trusting(certificate: Certificate) -> EmailSender:
    """An email sender that trusts ``certificate`` only."""
    return EmailSender(timeout_seconds=5, tls_context=certificate.client_context())


def test_an_email_carries_the_title_as_subject_and_the_facts_in_plain_text() -> None:
    with smtp_receiver() as receiver:
        EmailSender(timeout_seconds=5).send(email(receiver.port), NOTICE, {}, delivery_id=7)
    [mail] = receiver.messages
    assert mail.sender == "streamjobs@example.com"
    assert mail.recipients == ["ops@example.com", "oncall@example.com"]
    assert mail.message["Subject"] == "[streamjobs] orders-to-lake: failed"
    assert mail.message["X-Streamjobs-Delivery"] == "7"
    assert mail.message.get_content_type() == "text/plain"
    body = mail.message.get_content().replace("\r\n", "\n")
    assert body.startswith("attempt 3 failed: KeyError: 'x'\n")
    for line in ("Job: orders-to-lake", "Attempt: 3", "Bundle: payments", "recordsBehind: 1200"):
        assert line in body
    assert "Open: https://streamjobs.example/applications/app-1" in body
    assert mail.login is None


def test_starttls_with_a_login_uses_the_password_secret(certificate: Certificate) -> None:
    with smtp_receiver(starttls=certificate, logins={"alerts": "s3cret"}) as receiver:
        record = starttls_login(receiver.port)
        sender = trusting(certificate)
        sender.send(record, NOTICE, {"smtp-password": "s3cret"})
    [mail] = receiver.messages
    assert mail.login == "alerts"
    assert mail.message["Subject"] == "[streamjobs] orders-to-lake: failed"


def test_a_wrong_password_is_refused_with_the_servers_answer(certificate: Certificate) -> None:
    with smtp_receiver(starttls=certificate, logins={"alerts": "s3cret"}) as receiver:
        record = starttls_login(receiver.port)
        sender = trusting(certificate)
        with pytest.raises(DeliveryFailed) as failed:
            sender.send(record, NOTICE, {"smtp-password": "wrong"})
    assert f"localhost:{receiver.port} refused the login of 'alerts': 535" in failed.value.reason
    assert failed.value.field == "user"
    assert receiver.messages == []


def test_tls_from_the_first_byte(certificate: Certificate) -> None:
    with smtp_receiver(implicit_tls=certificate) as receiver:
        record = email(receiver.port, host="localhost", security="tls")
        sender = trusting(certificate)
        sender.send(record, NOTICE, {})
    assert len(receiver.messages) == 1


def test_an_untrusted_certificate_fails_with_the_tls_reason(certificate: Certificate) -> None:
    with smtp_receiver(starttls=certificate) as receiver:
        record = email(receiver.port, host="localhost", security="starttls")
        with pytest.raises(DeliveryFailed) as failed:
            EmailSender(timeout_seconds=5).send(record, NOTICE, {})
    assert "CERTIFICATE_VERIFY_FAILED" in failed.value.reason
    assert receiver.messages == []


def test_an_unknown_host_fails_saying_it_could_not_connect() -> None:
    record = email(25, host="smtp.invalid")
    with pytest.raises(DeliveryFailed) as failed:
        EmailSender(timeout_seconds=5).send(record, NOTICE, {})
    assert failed.value.reason.startswith("could not connect to smtp.invalid:25: ")
    assert failed.value.field == "host"


def test_a_closed_port_fails_with_connection_refused() -> None:
    port = free_loopback_port()
    with pytest.raises(DeliveryFailed) as failed:
        EmailSender(timeout_seconds=5).send(email(port), NOTICE, {})
    assert failed.value.reason == f"could not connect to 127.0.0.1:{port}: Connection refused"


def test_a_missing_password_secret_fails_before_connecting() -> None:
    record = email(free_loopback_port(), user="alerts", passwordSecret="smtp-password")
    with pytest.raises(DeliveryFailed) as failed:
        EmailSender(timeout_seconds=5).send(record, NOTICE, {})
    assert failed.value.reason == (
        "secret 'smtp-password' (spec.passwordSecret) is not in bundle 'default'"
    )
    assert failed.value.field == "passwordSecret"


def test_a_webhook_gets_the_notice_signed_with_its_delivery_id_and_headers() -> None:
    with http_receiver(status=204, reply=b"") as receiver:
        record = destination(
            {
                "type": "webhook",
                "url": receiver.url,
                "signingSecret": "hook-key",
                "headers": {"X-Team": "payments"},
                "headerSecrets": {"Authorization": "hook-token"},
            }
        )
        status = WebhookSender(timeout_seconds=5).send(
            record, NOTICE, {"hook-key": "k3y", "hook-token": "Bearer abc"}, delivery_id=42
        )
    assert status == 204
    [request] = receiver.requests
    expected = hmac.new(b"k3y", request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-streamjobs-signature"] == f"sha256={expected}"
    assert request.headers["x-streamjobs-delivery"] == "42"
    assert request.headers["x-streamjobs-event"] == "failed"
    assert request.headers["x-team"] == "payments"
    assert request.headers["authorization"] == "Bearer abc"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.body) == NOTICE.to_json()
    assert Notice.from_json(json.loads(request.body)) == NOTICE


def test_an_unsigned_webhook_has_no_signature_header() -> None:
    with http_receiver() as receiver:
        record = destination({"type": "webhook", "url": receiver.url})
        assert WebhookSender(timeout_seconds=5).send(record, NOTICE, {}) == 200
    [request] = receiver.requests
    assert "x-streamjobs-signature" not in request.headers
    assert "x-streamjobs-delivery" not in request.headers


def test_a_webhook_answering_an_error_fails_with_its_status_and_answer() -> None:
    with http_receiver(status=503, reply=b"busy, try later") as receiver:
        record = destination({"type": "webhook", "url": receiver.url})
        with pytest.raises(DeliveryFailed) as failed:
            WebhookSender(timeout_seconds=5).send(record, NOTICE, {})
    assert failed.value.reason == f"{receiver.url} answered HTTP 503: busy, try later"
    assert (failed.value.response_status, failed.value.field) == (503, "url")


def test_an_unreachable_webhook_fails_saying_where() -> None:
    port = free_loopback_port()
    record = destination({"type": "webhook", "url": f"http://127.0.0.1:{port}/hook"})
    with pytest.raises(DeliveryFailed) as failed:
        WebhookSender(timeout_seconds=5).send(record, NOTICE, {})
    assert failed.value.reason == f"could not connect to 127.0.0.1:{port}: Connection refused"


def test_slack_gets_text_and_blocks_at_the_url_of_its_secret() -> None:
    with http_receiver() as receiver:
        record = destination({"type": "slack", "urlSecret": "slack-url"})
        SlackSender(timeout_seconds=5).send(record, NOTICE, {"slack-url": receiver.url})
    [request] = receiver.requests
    body = json.loads(request.body)
    assert body == slack_body(NOTICE)
    assert body["text"] == "[streamjobs] orders-to-lake: failed: attempt 3 failed: KeyError: 'x'"
    header, message, facts, figures, link = body["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": "[streamjobs] orders-to-lake: failed"},
    }
    assert message["text"] == {"type": "mrkdwn", "text": "attempt 3 failed: KeyError: 'x'"}
    assert {"type": "mrkdwn", "text": "*Job*\norders-to-lake"} in facts["fields"]
    assert len(facts["fields"]) <= 10
    assert "recordsBehind: 1200" in figures["text"]["text"]
    assert link["elements"][0]["text"] == (
        "<https://streamjobs.example/applications/app-1|Open the application>"
    )


def test_slack_escapes_what_mrkdwn_would_read_as_markup() -> None:
    notice = Notice(event=NotificationEvent.FAILED, job="j", at=AT, message="a < b & c > d")
    body = slack_body(notice)
    assert body["blocks"][1]["text"]["text"] == "a &lt; b &amp; c &gt; d"
    assert len(body["blocks"]) == 3  # no figures, no absolute link


def test_a_failing_slack_webhook_does_not_show_its_secret_url() -> None:
    with http_receiver(status=404, reply=b"no_service") as receiver:
        record = destination({"type": "slack", "urlSecret": "slack-url"})
        with pytest.raises(DeliveryFailed) as failed:
            SlackSender(timeout_seconds=5).send(record, NOTICE, {"slack-url": receiver.url})
    assert failed.value.reason == "the Slack webhook at 127.0.0.1 answered HTTP 404: no_service"
    assert receiver.url not in failed.value.reason


def test_a_slack_secret_that_is_not_a_url_is_refused() -> None:
    record = destination({"type": "slack", "urlSecret": "slack-url"})
    with pytest.raises(DeliveryFailed) as failed:
        SlackSender(timeout_seconds=5).send(record, NOTICE, {"slack-url": "not a url"})
    assert "does not hold an http(s) URL" in failed.value.reason
    assert failed.value.field == "urlSecret"


def test_sender_for_gives_each_kind_its_sender() -> None:
    assert isinstance(sender_for("email"), EmailSender)
    assert isinstance(sender_for("webhook"), WebhookSender)
    assert isinstance(sender_for("slack", timeout_seconds=1), SlackSender)
    with pytest.raises(ValueError, match="pager"):
        sender_for("pager")


def refused_unsent(spec: dict[str, Any], secrets: Mapping[str, str]) -> tuple[DeliveryFailed, str]:
    """Send to a webhook destination with ``spec`` besides its URL, which must fail before any
    request reaches the receiver: the failure, and the receiver's URL."""
    with http_receiver() as receiver:
        record = destination({"type": "webhook", "url": receiver.url, **spec})
        with pytest.raises(DeliveryFailed) as failed:
            WebhookSender(timeout_seconds=5).send(record, NOTICE, secrets)
    assert receiver.requests == []
    return failed.value, receiver.url


def test_a_header_secret_that_cannot_be_a_header_value_is_refused_unsent() -> None:
    failure, _ = refused_unsent(
        {"headerSecrets": {"X-Key": "hook-key"}}, {"hook-key": "a\nX-Evil: 1"}
    )
    assert "cannot be a header's value" in failure.reason
    assert failure.field == "headerSecrets"


def test_a_header_secret_with_a_trailing_space_is_refused_without_showing_it() -> None:
    failure, _ = refused_unsent(
        {"headerSecrets": {"Authorization": "token"}}, {"token": "Bearer s3cr3t "}
    )
    assert "cannot be a header's value" in failure.reason
    assert "s3cr3t" not in failure.reason
    assert failure.field == "headerSecrets"


def test_a_header_http_cannot_write_fails_without_quoting_the_request() -> None:
    failure, url = refused_unsent({"headers": {"X-Team": "payments "}}, {})
    assert failure.reason.startswith(f"the request to {url} could not be written")
    assert "payments" not in failure.reason
    assert failure.field == "headers"


def test_a_password_smtp_cannot_carry_fails_without_showing_it(certificate: Certificate) -> None:
    with smtp_receiver(starttls=certificate, logins={"alerts": "pässwörd"}) as receiver:
        record = starttls_login(receiver.port)
        with pytest.raises(DeliveryFailed) as failed:
            trusting(certificate).send(record, NOTICE, {"smtp-password": "pässwörd"})
    assert "secret 'smtp-password' holds characters other than ASCII" in failed.value.reason
    for character in ("ä", "ö", "\\xe4", "\\xf6"):
        assert character not in failed.value.reason
    assert failed.value.field == "passwordSecret"
    assert receiver.messages == []
