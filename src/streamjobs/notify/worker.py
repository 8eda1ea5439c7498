"""Sending the outbox: the worker that delivers queued notices, retries them, and keeps each
destination's health.

It runs in a thread of its own, apart from the supervisor's: a destination that is slow or down
costs this thread its send timeout, never a supervisor tick. Its store transactions are short
(read what is due; claim one row; record one outcome) and a send is never inside one.

Exactly once, as far as a receiver can tell:

- A row is *claimed* before it is sent (``NotificationRepository.claim``: a lease that moves its
  ``next_attempt_at`` past the longest a send may take), so two workers, or a server started
  again while the old one's send is in flight, never send one row at the same time.
- The 2xx is recorded in its own transaction right after it arrives, before anything else.
- What is left is one window: the server dies after the receiver answered 2xx and before that
  transaction commits. The row is still pending, and once its lease ends it is sent again. Every
  send of one row carries the same ``X-Streamjobs-Delivery`` header (the row's id), in the
  HTTP request of a webhook or Slack and in the headers of an email, so a receiver that keeps
  the ids it has seen drops the second copy. Nothing is lost either way: a row leaves
  ``pending`` only once it is delivered or its last attempt failed.

A failed send is tried again after an exponential backoff with jitter (``retry_delay``) until
``max_attempts``; then the row is failed for good. ``unhealthy_after`` failures in a row mark
the destination unhealthy, its next success healthy again; each failure and each change of
health is audited.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.notices import Notice
from streamjobs.notify.senders import DeliveryFailed, Sender, sender_for
from streamjobs.settings import Settings
from streamjobs.store.db import Repositories, Store
from streamjobs.store.destinations import DestinationRecord
from streamjobs.store.notifications import OutboxRecord

log = logging.getLogger("streamjobs.notify")

AUDIT_ACTOR = "notification-delivery"
"""Who the audit trail says recorded a delivery's failure or a destination's change of health."""
JITTER = 0.2
"""A retry waits up to this fraction longer than its backoff, so that notices that failed
together (a destination down) are not all tried again at the same moment."""


class SecretResolver(Protocol):
    """Gives the values of a bundle's secrets (``services.secrets.SecretService``).

    Contract: ``resolve(bundle, names)`` returns the value of each of ``names`` the bundle has,
    by name, and leaves out those it lacks.
    """

    def resolve(self, bundle: str, names: Iterable[str]) -> dict[str, str]: ...


@dataclass(frozen=True)
class DeliveryTerms:
    """How the worker paces, retries and judges deliveries (from the settings)."""

    interval_seconds: float = 2.0
    retry_base_seconds: float = 10.0
    retry_max_seconds: float = 3600.0
    max_attempts: int = 8
    unhealthy_after: int = 3
    send_timeout_seconds: float = 10.0
    batch: int = 50
    """At most this many rows per round."""

    @classmethod
    def from_settings(cls, settings: Settings) -> DeliveryTerms:
        return cls(
            interval_seconds=settings.delivery_interval_seconds,
            retry_base_seconds=settings.delivery_retry_base_seconds,
            retry_max_seconds=settings.delivery_retry_max_seconds,
            max_attempts=settings.delivery_max_attempts,
            unhealthy_after=settings.delivery_unhealthy_after,
            send_timeout_seconds=settings.delivery_send_timeout_seconds,
        )

    @property
    def lease_seconds(self) -> float:
        """How long a claimed row is left alone: longer than any send may take (an email's
        conversation is several steps, each bounded by the send timeout)."""
        return self.send_timeout_seconds * 6 + 30


def retry_delay(failed_attempts: int, terms: DeliveryTerms, jitter: float) -> float:
    """Seconds before the next try of a row that failed ``failed_attempts`` times: the base,
    doubled for each failure after the first, stretched by ``jitter`` (0 <= jitter < 1) times
    ``JITTER``, and never more than the maximum."""
    backoff = terms.retry_base_seconds * 2.0 ** max(0, failed_attempts - 1)
    return min(terms.retry_max_seconds, backoff * (1 + JITTER * jitter))


def absolute_link(notice: Notice, public_url: str) -> Notice:
    """The notice with its application link made absolute under the server's public URL."""
    if notice.link is None or "://" in notice.link:
        return notice
    return replace(notice, link=public_url.rstrip("/") + notice.link)


class DeliveryWorker:
    """Delivers the outbox's due notices, one round at a time (``run_once``) or in a thread."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        secrets: SecretResolver,
        public_url: str,
        terms: DeliveryTerms = DeliveryTerms(),
        senders: Callable[[str], Sender] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._store = store
        self._clock = clock
        self._secrets = secrets
        self._public_url = public_url
        self._terms = terms
        self._senders = senders or self._sender_with_timeout
        self._jitter = jitter
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        """Send every row due now (at most ``terms.batch``); how many were delivered."""
        with self._store.transaction() as repos:
            due = repos.notifications.due(self._clock.now(), self._terms.batch)
        delivered = 0
        for row in due:
            if self._stopping.is_set():
                break
            try:
                delivered += self._deliver(row)
            except Exception:  # one bad row never stops the others; it is due again later
                log.exception("delivering notification %s failed", row.id)
        return delivered

    def start(self) -> None:
        """Run a round every ``interval_seconds`` in a background thread until ``stop``."""
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="streamjobs-delivery")
        self._thread.daemon = True
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the send in flight (which its timeout bounds)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(self._terms.lease_seconds if timeout is None else timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stopping.wait(self._terms.interval_seconds):
            try:
                self.run_once()
            except Exception:  # the store away: the next round tries again
                log.exception("notification delivery round failed")

    def _deliver(self, row: OutboxRecord) -> int:
        now = self._clock.now()
        lease_end = now + timedelta(seconds=self._terms.lease_seconds)
        with self._store.transaction() as repos:
            if not repos.notifications.claim(row.id, now=now, until=lease_end):
                return 0  # another worker has it, or it was settled meanwhile
            destination = repos.destinations.find(row.destination)
        if destination is None:
            self._record_failure(row, None, "the destination no longer exists", final=True)
            return 0
        try:
            status = self._send(row, destination)
        except DeliveryFailed as failure:
            self._record_failure(row, destination, failure.reason, status=failure.response_status)
            return 0
        except Exception as error:  # a sender's bug is that row's failure, not the worker's end
            log.exception("sending notification %s to %s failed", row.id, destination.name)
            self._record_failure(row, destination, f"{type(error).__name__}: {error}")
            return 0
        self._record_delivery(row, destination, status)
        return 1

    def _sender_with_timeout(self, kind: str) -> Sender:
        return sender_for(kind, timeout_seconds=self._terms.send_timeout_seconds)

    def _send(self, row: OutboxRecord, destination: DestinationRecord) -> int | None:
        """The status the destination answered; ``DeliveryFailed`` (a secret it names missing
        from its bundle included) otherwise."""
        secrets = self._secrets.resolve(destination.bundle, destination.secret_names)
        notice = absolute_link(Notice.from_json(row.notice), self._public_url)
        sender = self._senders(destination.kind)
        return sender.send(destination, notice, secrets, delivery_id=row.id)

    def _record_delivery(
        self, row: OutboxRecord, destination: DestinationRecord, status: int | None
    ) -> None:
        with self._store.transaction() as repos:  # first and alone: the 2xx must not be lost
            repos.notifications.mark_delivered(row.id, at=self._clock.now(), response_status=status)
        self._record_health(destination.name, delivered=True, detail={"notification": row.id})

    def _record_failure(
        self,
        row: OutboxRecord,
        destination: DestinationRecord | None,
        reason: str,
        *,
        status: int | None = None,
        final: bool = False,
    ) -> None:
        now = self._clock.now()
        attempts = row.attempts + 1
        retry_at = None
        if not final and attempts < self._terms.max_attempts:
            delay = retry_delay(attempts, self._terms, self._jitter())
            retry_at = now + timedelta(seconds=delay)
        detail = {
            "notification": row.id,
            "event": row.event,
            "job": row.job_name,
            "application": row.application_id,
            "attempt": attempts,
            "error": reason,
            "retryAt": None if retry_at is None else retry_at.isoformat(),
        }
        with self._store.transaction() as repos:
            repos.notifications.mark_failed(
                row.id, error=reason, retry_at=retry_at, response_status=status
            )
            _audit(repos, now, "notification.failed", row.destination, detail)
        log.warning(
            "notification %s to %s failed (attempt %s): %s",
            row.id,
            row.destination,
            attempts,
            reason,
        )
        if destination is not None:
            self._record_health(destination.name, delivered=False, detail={"error": reason})

    def _record_health(self, name: str, *, delivered: bool, detail: Mapping[str, object]) -> None:
        now = self._clock.now()
        try:
            with self._store.transaction() as repos:
                change = repos.destinations.record_outcome(
                    name, delivered=delivered, unhealthy_after=self._terms.unhealthy_after
                )
                if change.changed:
                    action = "healthy" if change.healthy else "unhealthy"
                    _audit(
                        repos,
                        now,
                        f"notification-destination.{action}",
                        name,
                        {**detail, "consecutiveFailures": change.consecutive_failures},
                    )
        except StreamjobsError as error:  # deleted meanwhile: no health left to keep
            log.info("destination %s: %s", name, error.detail)


def _audit(
    repos: Repositories, at: datetime, action: str, destination: str, detail: Mapping[str, object]
) -> None:
    repos.audit.append(
        at=at,
        actor=AUDIT_ACTOR,
        action=action,
        resource_kind="notification-destination",
        resource_name=destination,
        detail=dict(detail),
        source="delivery",
    )
