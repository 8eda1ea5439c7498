"""What every sender shares: the error a failed delivery is, the ``Sender`` contract, the
secrets a destination names, and a failure's reason in words a person can act on.

A sender gets the destination as stored (its ``config`` holds secret names), the notice, and the
values of the destination's secrets by name; it either delivers or raises ``DeliveryFailed``
with a reason ("could not connect to smtp.invalid:25: Name or service not known"). The email
sender is ``notify.email``, the HTTP ones (webhook, Slack) and ``sender_for`` ``notify.senders``.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from collections.abc import Mapping
from typing import Protocol

from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.notices import Notice
from streamjobs.store.destinations import DestinationRecord

DEFAULT_TIMEOUT_SECONDS = 10.0
DELIVERY_HEADER = "X-Streamjobs-Delivery"
"""The outbox row's id: the same on every retry, so a receiver can drop a repeat."""


class DeliveryFailed(StreamjobsError):
    """A notice could not be delivered; ``detail`` says why.

    ``field`` names the destination's manifest field the failure points at (``host``, ``url``,
    ``passwordSecret``), when one does; ``response_status`` is the HTTP status a webhook
    answered, when it answered.
    """

    title = "Delivery failed"

    def __init__(
        self, reason: str, *, field: str | None = None, response_status: int | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field
        self.response_status = response_status


class Sender(Protocol):
    """Carries notices to destinations of one kind.

    Contract: ``send`` delivers ``notice`` to ``destination`` (whose ``config`` names secrets,
    whose values ``secrets`` holds by name) within the sender's timeout, and returns the HTTP
    status the destination answered (None where there is none, as for email); on any failure
    (unreachable, refused, timed out, a secret missing from ``secrets``) it raises
    ``DeliveryFailed`` and nothing else. ``delivery_id`` (the outbox row) lets a receiver
    recognise a retry.
    """

    def send(
        self,
        destination: DestinationRecord,
        notice: Notice,
        secrets: Mapping[str, str],
        *,
        delivery_id: int | None = None,
    ) -> int | None: ...


def secret_value(destination: DestinationRecord, field: str, secrets: Mapping[str, str]) -> str:
    """The value of the secret the destination's ``field`` names; ``DeliveryFailed`` at that
    field when ``secrets`` lacks it."""
    return secret(destination, destination.config[field], f"spec.{field}", field, secrets)


def secret(
    destination: DestinationRecord,
    name: str,
    path: str,
    field: str,
    secrets: Mapping[str, str],
) -> str:
    """The value of the secret ``name`` (named at the manifest's ``path``); ``DeliveryFailed``
    at ``field`` when ``secrets`` lacks it."""
    value = secrets.get(name)
    if value is None:
        raise DeliveryFailed(
            f"secret {name!r} ({path}) is not in bundle {destination.bundle!r}", field=field
        )
    return value


def failure_reason(error: BaseException) -> str:
    """What went wrong, in the words of the operating system where it has them
    ("Name or service not known", "Connection refused")."""
    for cause in _causes(error):
        if isinstance(cause, socket.gaierror | ConnectionError) and cause.strerror:
            return cause.strerror
        if isinstance(cause, ssl.SSLError):
            return cause.reason or str(cause)
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
    if isinstance(error, smtplib.SMTPResponseException):
        return smtp_answer(error)
    return str(error) or type(error).__name__


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def smtp_answer(error: smtplib.SMTPResponseException) -> str:
    return answer_text(error.smtp_code, error.smtp_error)


def answer_text(code: int, text: bytes | str) -> str:
    said = text.decode(errors="replace") if isinstance(text, bytes) else text
    return f"{code} {' '.join(said.split())}"
