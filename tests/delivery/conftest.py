"""A delivery worker over a real store of each backend, real SMTP and HTTP receivers, a fake
clock and fixed jitter: what the worker sends, when it tries again, and what it records."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streamjobs.composition import build_server
from streamjobs.domain.alerts import NotificationEvent
from streamjobs.domain.clock import FakeClock
from streamjobs.notify.worker import AUDIT_ACTOR, DeliveryTerms, DeliveryWorker
from streamjobs.services.container import Services
from streamjobs.services.outbox import enqueue_notifications
from streamjobs.settings import Settings
from streamjobs.store.audit import AuditEntry
from streamjobs.store.notifications import OutboxRecord
from tests.factories import pipeline_manifest
from tests.notify_receivers import (
    HttpReceiver,
    SmtpReceiver,
    email_destination,
    http_receiver,
    smtp_receiver,
    webhook_destination,
)
from tests.supervisor.conftest import (
    ALICE,
    world,  # noqa: F401 - the supervised world, for e2e tests
)

PUBLIC_URL = "https://streamjobs.example"
TERMS = DeliveryTerms(
    interval_seconds=0.05,
    retry_base_seconds=10,
    retry_max_seconds=60,
    max_attempts=4,
    unhealthy_after=2,
    send_timeout_seconds=5,
)
JITTER = 0.5
"""What the worker's random jitter draws each time: each retry waits 10% over its backoff."""


@dataclass
class Post:
    services: Services
    clock: FakeClock
    hook: HttpReceiver
    mail: SmtpReceiver

    def __post_init__(self) -> None:
        self.worker = self.worker_with()

    def worker_with(self, terms: DeliveryTerms = TERMS) -> DeliveryWorker:
        """A worker of its own over the same store (another server's, say)."""
        return DeliveryWorker(
            store=self.services.store,
            clock=self.clock,
            secrets=self.services.secrets,
            public_url=PUBLIC_URL,
            terms=terms,
            jitter=lambda: JITTER,
        )

    def job(self, name: str, subscriptions: list[dict[str, Any]]) -> str:
        self.services.jobs.create(pipeline_manifest(name, notifications=subscriptions), actor=ALICE)
        return name

    def enqueue(self, job: str, event: NotificationEvent = NotificationEvent.FAILED) -> int:
        with self.services.store.transaction() as repos:
            return enqueue_notifications(
                repos,
                job_name=job,
                application_id="app-1",
                event=event,
                message="attempt 1 failed: boom",
                at=self.clock.now(),
                attempt=1,
                figures={"inputRowsPerSecond": 5.0},
            )

    def rows(self, destination: str) -> list[OutboxRecord]:
        with self.services.store.reading() as repos:
            return list(reversed(repos.notifications.for_destination(destination, 100)))

    def audit(self, prefix: str = "notification") -> list[AuditEntry]:
        """The delivery worker's audit entries (``prefix``: of these actions), oldest first."""
        with self.services.store.reading() as repos:
            entries = repos.audit.list(limit=100, offset=0, actor=AUDIT_ACTOR, action=prefix)
        return sorted(entries, key=lambda entry: entry.id)

    def healthy(self, destination: str) -> bool:
        return self.services.destinations.get(destination).healthy


@contextmanager
def receiving(services: Services) -> Iterator[tuple[HttpReceiver, SmtpReceiver]]:
    """Real receivers behind the destinations "ops-hook" (a webhook) and "ops-mail" (email)."""
    with http_receiver() as hook, smtp_receiver() as mail:
        services.destinations.create(webhook_destination("ops-hook", hook.url), actor=ALICE)
        services.destinations.create(email_destination("ops-mail", mail.port), actor=ALICE)
        yield hook, mail


@pytest.fixture
def post(database_url: str, tmp_path: Path) -> Iterator[Post]:
    clock = FakeClock()
    settings = Settings(home=tmp_path / "home", database_url=database_url, public_url=PUBLIC_URL)
    server = build_server(settings, clock=clock, supervise=False)
    services = server.services
    with receiving(services) as (hook, mail):
        yield Post(services=services, clock=clock, hook=hook, mail=mail)
    server.close()
