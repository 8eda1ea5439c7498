"""The notification outbox: each notice to send to one destination, and its delivery's outcome.

A row is added ``pending`` in the transaction of the event that causes it (``add``), so a
notice exists exactly when its event does. The delivery worker reads what is ``due``, takes a
row with ``claim`` (a lease on ``next_attempt_at``: a worker that dies mid-send leaves the row to
be retried once the lease ends, and another worker cannot take it meanwhile), sends it, and
records ``mark_delivered`` or ``mark_failed`` (with a time to retry, or None: failed for good).
A destination's page lists its rows newest first (``for_destination``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Select, delete, func, select, update

from streamjobs.domain.errors import NotFound
from streamjobs.store.base import Repository
from streamjobs.store.notification_tables import NotificationOutboxRow
from streamjobs.store.tables import JobRow


class DeliveryState(StrEnum):
    """Where a notice's delivery stands."""

    PENDING = "pending"
    """Not delivered yet: due at ``next_attempt_at``."""
    DELIVERED = "delivered"
    FAILED = "failed"
    """Given up on: the last attempt failed and no retry is planned."""


@dataclass(frozen=True)
class OutboxRecord:
    """One notice for one destination, as the outbox keeps it."""

    id: int
    """Also the delivery's idempotency key (a webhook's ``X-Streamjobs-Delivery`` header)."""
    destination: str
    job_name: str | None
    """None for a destination's "send test"."""
    application_id: str | None
    event: str
    notice: dict[str, Any]
    """``Notice.to_json()``."""
    created_at: datetime
    state: DeliveryState
    attempts: int
    next_attempt_at: datetime | None
    last_error: str | None
    delivered_at: datetime | None
    response_status: int | None
    """The HTTP status a webhook answered (None for email and for no answer)."""


@dataclass(frozen=True)
class JobSubscriptions:
    """What queueing a job's notices needs of the job: its subscriptions, as the manifest's JSON
    keeps them, and where it belongs."""

    bundle: str
    namespace: str
    subscriptions: list[dict[str, Any]]


class NotificationRepository(Repository):
    """Adds notices to the outbox and records how their deliveries go."""

    def add(
        self,
        *,
        destination: str,
        job_name: str | None,
        application_id: str | None,
        event: str,
        notice: dict[str, Any],
        at: datetime,
    ) -> OutboxRecord:
        """Queue ``notice`` for ``destination``, due at once."""
        row = NotificationOutboxRow(
            destination=destination,
            job_name=job_name,
            application_id=application_id,
            event=event,
            notice=notice,
            created_at=at,
            state=DeliveryState.PENDING.value,
            attempts=0,
            next_attempt_at=at,
        )
        self._insert(row)
        return _record(row)

    def subscriptions_of(self, job_name: str) -> JobSubscriptions | None:
        """The job's ``spec.notifications`` as stored (raw JSON), with its bundle and namespace;
        None when there is no such job. One query that fetches only that part of the manifest
        (a JSON path in the database), so an event of a job without subscriptions neither reads
        nor parses the rest of its manifest. (Added by "delivery" for ``services.outbox``.)"""
        statement = select(
            JobRow.bundle, JobRow.namespace, JobRow.manifest[("spec", "notifications")]
        ).where(JobRow.name == job_name)
        row = self._session.execute(statement).one_or_none()
        if row is None:
            return None
        bundle, namespace, subscriptions = row
        return JobSubscriptions(
            bundle=bundle, namespace=namespace, subscriptions=list(subscriptions or [])
        )

    def get(self, outbox_id: int) -> OutboxRecord:
        """The outbox row ``outbox_id``; ``NotFound`` if there is none."""
        found = self._records(_select_outbox().where(NotificationOutboxRow.id == outbox_id))
        if not found:
            raise NotFound("notification", str(outbox_id))
        return found[0]

    def due(self, now: datetime, limit: int) -> list[OutboxRecord]:
        """At most ``limit`` pending rows whose time has come, those due longest first."""
        statement = (
            _select_outbox()
            .where(
                NotificationOutboxRow.state == DeliveryState.PENDING.value,
                NotificationOutboxRow.next_attempt_at <= now,
            )
            .order_by(NotificationOutboxRow.next_attempt_at, NotificationOutboxRow.id)
            .limit(limit)
        )
        return self._records(statement)

    def claim(self, outbox_id: int, *, now: datetime, until: datetime) -> bool:
        """Take the row for one delivery attempt: if it is still pending and due at ``now``, it
        is not due again before ``until``. False when another worker took it first (or it is
        no longer pending)."""
        statement = (
            update(NotificationOutboxRow)
            .where(
                NotificationOutboxRow.id == outbox_id,
                NotificationOutboxRow.state == DeliveryState.PENDING.value,
                NotificationOutboxRow.next_attempt_at <= now,
            )
            .values(next_attempt_at=until)
        )
        return self._rows_changed(statement) == 1

    def mark_delivered(
        self, outbox_id: int, *, at: datetime, response_status: int | None = None
    ) -> OutboxRecord:
        """Record a successful attempt: the row is delivered and never sent again."""
        self._change(
            outbox_id,
            state=DeliveryState.DELIVERED.value,
            attempts=NotificationOutboxRow.attempts + 1,
            delivered_at=at,
            next_attempt_at=None,
            response_status=response_status,
        )
        return self.get(outbox_id)

    def mark_failed(
        self,
        outbox_id: int,
        *,
        error: str,
        retry_at: datetime | None,
        response_status: int | None = None,
    ) -> OutboxRecord:
        """Record a failed attempt with its reason: pending again, due at ``retry_at``, or (None)
        failed for good."""
        state = DeliveryState.FAILED if retry_at is None else DeliveryState.PENDING
        self._change(
            outbox_id,
            state=state.value,
            attempts=NotificationOutboxRow.attempts + 1,
            next_attempt_at=retry_at,
            last_error=error,
            response_status=response_status,
        )
        return self.get(outbox_id)

    def for_destination(self, destination: str, limit: int) -> list[OutboxRecord]:
        """The destination's ``limit`` newest rows, newest first."""
        statement = (
            _select_outbox()
            .where(NotificationOutboxRow.destination == destination)
            .order_by(NotificationOutboxRow.id.desc())
            .limit(limit)
        )
        return self._records(statement)

    def for_application(self, application_id: str) -> list[OutboxRecord]:
        """Every row about the application, oldest first."""
        statement = (
            _select_outbox()
            .where(NotificationOutboxRow.application_id == application_id)
            .order_by(NotificationOutboxRow.id)
        )
        return self._records(statement)

    def depth(self) -> int:
        """How many notices wait to be delivered (pending rows)."""
        statement = (
            select(func.count())
            .select_from(NotificationOutboxRow)
            .where(NotificationOutboxRow.state == DeliveryState.PENDING.value)
        )
        return self._session.scalar(statement) or 0

    def failures_total(self) -> int:
        """How many delivery attempts failed, over every row the outbox keeps: each attempt but
        a delivered row's last one."""
        attempts = func.coalesce(func.sum(NotificationOutboxRow.attempts), 0)
        delivered = func.count(NotificationOutboxRow.delivered_at)
        total = self._session.execute(select(attempts - delivered)).scalar_one()
        return int(total or 0)

    def delete_for_destination(self, destination: str) -> int:
        """Forget every row of ``destination`` (deleted with it); how many there were."""
        statement = delete(NotificationOutboxRow).where(
            NotificationOutboxRow.destination == destination
        )
        return self._rows_changed(statement)

    def _records(self, statement: Select[NotificationOutboxRow]) -> list[OutboxRecord]:
        return [_record(row) for row in self._session.scalars(statement)]

    def _change(self, outbox_id: int, **values: Any) -> None:
        statement = (
            update(NotificationOutboxRow)
            .where(NotificationOutboxRow.id == outbox_id)
            .values(**values)
        )
        if not self._rows_changed(statement):
            raise NotFound("notification", str(outbox_id))


def _select_outbox() -> Select[NotificationOutboxRow]:
    """Select outbox rows, refreshing rows the session read before: the worker and others may
    have changed them since."""
    return select(NotificationOutboxRow).execution_options(populate_existing=True)


def _record(row: NotificationOutboxRow) -> OutboxRecord:
    return OutboxRecord(
        id=row.id,
        destination=row.destination,
        job_name=row.job_name,
        application_id=row.application_id,
        event=row.event,
        notice=copy.deepcopy(row.notice),
        created_at=row.created_at,
        state=DeliveryState(row.state),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        delivered_at=row.delivered_at,
        response_status=row.response_status,
    )
