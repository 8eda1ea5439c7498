"""One notification's content, the same whatever carries it (email, webhook, Slack).

The outbox stores a ``Notice`` as JSON in the transaction of the event that causes it; the
delivery worker reads it back and hands it to the sender of each destination kind, which only
chooses how to lay it out. Keeping the content here, apart from the senders, is what makes the
message a webhook receives and the one an email says the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from streamjobs.domain.alerts import NotificationEvent


@dataclass(frozen=True)
class Notice:
    """What happened to which job's application, with the figures it had then."""

    event: NotificationEvent
    job: str
    at: datetime
    message: str
    """One line a person reads first: ``attempt 3 failed: KeyError: 'x'``."""
    application_id: str | None = None
    """None for a destination's "send test"."""
    bundle: str | None = None
    namespace: str | None = None
    attempt: int | None = None
    rule: str | None = None
    """The health rule, for health-firing and health-recovered."""
    figures: Mapping[str, Any] = field(default_factory=dict)
    """The application's latest figures (rows/s, batch duration, records behind, ...)."""
    link: str | None = None
    """The application's page on the server (absolute when the server knows its public URL)."""

    @property
    def title(self) -> str:
        """A subject line: ``[streamjobs] orders-to-lake: failed``."""
        what = f"{self.event} ({self.rule})" if self.rule else str(self.event)
        return f"[streamjobs] {self.job}: {what}"

    def to_json(self) -> dict[str, Any]:
        """The JSON body a webhook receives (and the outbox keeps)."""
        return {
            "event": str(self.event),
            "job": self.job,
            "bundle": self.bundle,
            "namespace": self.namespace,
            "application": self.application_id,
            "attempt": self.attempt,
            "rule": self.rule,
            "at": self.at.isoformat(),
            "message": self.message,
            "figures": dict(self.figures),
            "link": self.link,
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Notice:
        """The notice ``to_json`` gave (as the outbox stored it)."""
        return cls(
            event=NotificationEvent(body["event"]),
            job=str(body["job"]),
            at=datetime.fromisoformat(body["at"]),
            message=str(body["message"]),
            application_id=body.get("application"),
            bundle=body.get("bundle"),
            namespace=body.get("namespace"),
            attempt=body.get("attempt"),
            rule=body.get("rule"),
            figures=dict(body.get("figures") or {}),
            link=body.get("link"),
        )
