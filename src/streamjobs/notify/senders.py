"""The senders: one per destination kind, each carrying a ``Notice`` to one destination; here
the HTTP ones (webhook, Slack) and ``sender_for``, which the delivery worker and a destination's
"send test" both go through. The email sender is ``notify.email``; what they all share (the
``Sender`` contract, ``DeliveryFailed``, secrets, reasons) ``notify.sending``. Every network step
has a timeout, so a dead destination costs at most that long.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import orjson

import streamjobs
from streamjobs.domain.notices import Notice
from streamjobs.notify.email import EmailSender
from streamjobs.notify.layouts import slack_body
from streamjobs.notify.sending import (
    DEFAULT_TIMEOUT_SECONDS,
    DELIVERY_HEADER,
    DeliveryFailed,
    Sender,
    failure_reason,
    secret,
    secret_value,
)
from streamjobs.store.destinations import DestinationRecord

__all__ = [
    "DeliveryFailed",
    "EmailSender",
    "Sender",
    "SlackSender",
    "WebhookSender",
    "sender_for",
    "signature",
]

SIGNATURE_HEADER = "X-Streamjobs-Signature"
"""``sha256=<hex>``: the HMAC-SHA256 of the exact body bytes, keyed with the signing secret."""
EVENT_HEADER = "X-Streamjobs-Event"
_ANSWER_SHOWN = 200
"""How much of a refusing HTTP answer's body a reason quotes."""
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?")
"""What an HTTP header's value may be (RFC 9110 ``field-value``, as httpx writes it): printable
ASCII, with spaces and tabs only between other characters."""


@dataclass(frozen=True)
class _Post:
    """What an HTTP sender POSTs: where, the body, its own headers, how reasons name the
    receiver and the manifest field a failure points at."""

    url: str
    body: bytes
    headers: dict[str, str]
    shown: str
    field: str = "url"


class _HttpSender:
    """What the HTTP senders share: the timeout, the standard headers and the POST itself; a
    subclass says what to post (``_post``)."""

    def __init__(self, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._timeout = timeout_seconds

    def send(
        self,
        destination: DestinationRecord,
        notice: Notice,
        secrets: Mapping[str, str],
        *,
        delivery_id: int | None = None,
    ) -> int | None:
        request = self._post(destination, notice, secrets)
        headers = request.headers | _standard_headers(notice, delivery_id)
        return post(
            request.url,
            request.body,
            headers,
            timeout=self._timeout,
            shown=request.shown,
            field=request.field,
        )

    def _post(
        self, destination: DestinationRecord, notice: Notice, secrets: Mapping[str, str]
    ) -> _Post:
        raise NotImplementedError


class WebhookSender(_HttpSender):
    """POSTs ``Notice.to_json()`` to the destination's URL; any 2xx answer is a delivery.

    The body is signed when the destination names a signing secret, and carries its custom
    headers and the values of its header secrets. Redirects are not followed: a webhook that
    moved is a failure to fix, not a body to send somewhere else.
    """

    def _post(
        self, destination: DestinationRecord, notice: Notice, secrets: Mapping[str, str]
    ) -> _Post:
        config = destination.config
        body = orjson.dumps(notice.to_json())
        headers = dict(config.get("headers") or {})
        for header in config.get("headerSecrets") or {}:
            headers[header] = _header_secret(destination, header, secrets)
        if config.get("signingSecret"):
            key = secret_value(destination, "signingSecret", secrets)
            headers[SIGNATURE_HEADER] = signature(key, body)
        url = str(config["url"])
        return _Post(url, body, headers, shown=url)


class SlackSender(_HttpSender):
    """POSTs a Slack message (``text`` and ``blocks``) to the incoming-webhook URL held by the
    destination's ``urlSecret``. Reasons name only the URL's host: the URL is a credential."""

    def _post(
        self, destination: DestinationRecord, notice: Notice, secrets: Mapping[str, str]
    ) -> _Post:
        url = secret_value(destination, "urlSecret", secrets).strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise DeliveryFailed(
                f"secret {destination.config['urlSecret']!r} does not hold an http(s) URL "
                "(Slack's incoming-webhook URL, https://hooks.slack.com/services/...)",
                field="urlSecret",
            )
        body = orjson.dumps(slack_body(notice))
        shown = f"the Slack webhook at {parts.hostname}"
        return _Post(url, body, {}, shown=shown, field="urlSecret")


def signature(key: str, body: bytes) -> str:
    """The ``X-Streamjobs-Signature`` of ``body``: ``sha256=`` and the hex HMAC-SHA256 keyed
    with ``key`` (UTF-8). A receiver computes the same over the bytes it got and compares."""
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: float,
    shown: str,
    field: str = "url",
) -> int:
    """POST ``body`` as JSON and give the 2xx status; ``DeliveryFailed`` at ``field`` otherwise.
    ``shown`` is how reasons name the receiver. The server's environment is honoured as httpx
    reads it (``HTTPS_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``), so webhooks behind a proxy or
    an internal CA work as other outbound HTTP of the machine does."""
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            answer = client.post(
                url, content=body, headers={"Content-Type": "application/json", **headers}
            )
    except httpx.TimeoutException:
        raise DeliveryFailed(f"{shown} did not answer within {timeout:g} s", field=field) from None
    except httpx.LocalProtocolError:  # its text quotes the request's bytes: secrets, maybe
        raise DeliveryFailed(
            f"the request to {shown} could not be written: a header's value is not valid HTTP "
            "(printable ASCII, with spaces and tabs only between other characters)",
            field="headers",
        ) from None
    except httpx.HTTPError as error:
        where = _host_port(url)
        raise DeliveryFailed(
            f"could not connect to {where}: {failure_reason(error)}", field=field
        ) from None
    if not 200 <= answer.status_code < 300:
        text = " ".join(answer.text.split())[:_ANSWER_SHOWN]
        said = f": {text}" if text else ""
        raise DeliveryFailed(
            f"{shown} answered HTTP {answer.status_code}{said}",
            field=field,
            response_status=answer.status_code,
        )
    return answer.status_code


def sender_for(kind: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> Sender:
    """The sender of destinations of ``kind`` (``email``, ``webhook``, ``slack``); ValueError
    for another kind (the manifest's rules allow none)."""
    if kind == "email":
        return EmailSender(timeout_seconds=timeout_seconds)
    if kind == "webhook":
        return WebhookSender(timeout_seconds=timeout_seconds)
    if kind == "slack":
        return SlackSender(timeout_seconds=timeout_seconds)
    raise ValueError(f"no sender for destinations of kind {kind!r}")


def _header_secret(destination: DestinationRecord, header: str, secrets: Mapping[str, str]) -> str:
    name = destination.config["headerSecrets"][header]
    path = f"spec.headerSecrets.{header}"
    value = secret(destination, name, path, "headerSecrets", secrets)
    if not _HEADER_VALUE.fullmatch(value):
        raise DeliveryFailed(
            f"secret {name!r} ({path}) cannot be a header's value: only printable ASCII "
            "characters may be, with spaces and tabs only between them",
            field="headerSecrets",
        )
    return value


def _standard_headers(notice: Notice, delivery_id: int | None) -> dict[str, str]:
    headers = {
        "User-Agent": f"streamjobs/{streamjobs.__version__}",
        EVENT_HEADER: str(notice.event),
    }
    if delivery_id is not None:
        headers[DELIVERY_HEADER] = str(delivery_id)
    return headers


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"
