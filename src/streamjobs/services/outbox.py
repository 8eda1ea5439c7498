"""Queueing notifications: the outbox rows an application's event causes, written in the
transaction of that event.

Writing the notices where the event is written is what makes delivery reliable: a state change
that commits has its notices committed with it, and one that rolls back (a lost race, a
deadlock) leaves none behind. The delivery worker (``notify.worker``) sends them later, outside
any transaction, so a slow or dead destination never holds up the change that caused its notice.

The job's subscriptions are read as they are NOW (``spec.notifications`` of its current
manifest, not the application's snapshot), so a destination added to a running job is told of
that job's next event. Reading them costs one query that fetches only that part of the manifest
(``NotificationRepository.subscriptions_of``); a job without subscriptions costs nothing more.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from streamjobs.domain.alerts import HEALTH_EVENTS, NotificationEvent, Subscription, lifecycle_event
from streamjobs.domain.notices import Notice
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories

log = logging.getLogger(__name__)


def application_path(application_id: str) -> str:
    """The application's page in the web UI, relative to the server's public URL (the delivery
    worker makes it absolute, as only the server's settings know that URL)."""
    return f"/applications/{application_id}"


def enqueue_notifications(
    repos: Repositories,
    *,
    job_name: str,
    application_id: str | None,
    event: NotificationEvent,
    message: str,
    at: datetime,
    attempt: int | None = None,
    rule: str | None = None,
    figures: Mapping[str, Any] | None = None,
) -> int:
    """Queue ``event`` of the job's application for every destination the job's current
    subscriptions send it to (for a health event, only those that take ``rule``), in the
    transaction of ``repos``; how many notices were queued (0 for a job deleted meanwhile)."""
    found = repos.notifications.subscriptions_of(job_name)
    if found is None or not found.subscriptions:
        return 0
    destinations = subscribed_destinations(_readable(job_name, found.subscriptions), event, rule)
    if not destinations:
        return 0
    notice = Notice(
        event=event,
        job=job_name,
        at=at,
        message=message,
        application_id=application_id,
        bundle=found.bundle,
        namespace=found.namespace,
        attempt=attempt,
        rule=rule,
        figures=dict(figures or {}),
        link=None if application_id is None else application_path(application_id),
    )
    body = notice.to_json()
    for destination in destinations:
        repos.notifications.add(
            destination=destination,
            job_name=job_name,
            application_id=application_id,
            event=str(event),
            notice=body,
            at=at,
        )
    return len(destinations)


def _readable(job_name: str, stored: Sequence[Any]) -> list[Subscription]:
    """The stored subscriptions that still parse: one a later version would refuse is left out
    (and logged) rather than failing the state change that is queueing the notices."""
    readable = []
    for index, raw in enumerate(stored):
        try:
            readable.append(Subscription.model_validate(raw))
        except ValidationError as error:
            log.warning(
                "job %s: spec.notifications[%d] is not a subscription (%s); it is skipped",
                job_name,
                index,
                error.errors()[0]["msg"] if error.errors() else error,
            )
    return readable


def subscribed_destinations(
    subscriptions: Sequence[Subscription], event: NotificationEvent, rule: str | None
) -> list[str]:
    """The destinations, in the job's order, whose subscription takes ``event`` (and, for a
    health event, ``rule``: a subscription without rules takes every rule's)."""
    chosen: list[str] = []
    for subscription in subscriptions:
        if event not in subscription.events:
            continue
        if event in HEALTH_EVENTS and subscription.rules and rule not in subscription.rules:
            continue
        if subscription.destination not in chosen:
            chosen.append(subscription.destination)
    return chosen


def enqueue_lifecycle(
    repos: Repositories, previous: AppState | None, application: ApplicationRecord, *, at: datetime
) -> int:
    """Queue the notices of ``application`` having entered its state from ``previous`` (None:
    it was just created), if that move is an event (``domain.alerts.lifecycle_event``)."""
    event = lifecycle_event(previous, application.state)
    if event is None:
        return 0
    attempt, message = lifecycle_message(event, previous, application, at)
    return enqueue_notifications(
        repos,
        job_name=application.job_name,
        application_id=application.id,
        event=event,
        message=message,
        at=at,
        attempt=attempt,
        figures=application.latest,
    )


def lifecycle_message(
    event: NotificationEvent,
    previous: AppState | None,
    application: ApplicationRecord,
    at: datetime,
) -> tuple[int | None, str]:
    """The attempt a lifecycle event is about and the line a person reads first, from the
    application as the event left it."""
    ran = application.submission_attempts
    """Each submission is an attempt; the latest one's number."""
    cause = application.error_message
    if event is NotificationEvent.STARTED:
        if previous is AppState.SUSPENDED:
            return ran + 1, f"resumed from its checkpoint: attempt {ran + 1} starting"
        return ran + 1, f"started by {application.triggered_by}"
    if event is NotificationEvent.RUNNING:
        return ran, f"attempt {ran} is running"
    if event is NotificationEvent.COMPLETED:
        return ran, f"completed (attempt {ran} finished)"
    if event in (NotificationEvent.STOPPED, NotificationEvent.ABORTED):
        by = f" by {application.requested_by}" if application.requested_by else ""
        return ran, f"{event}{by}"
    if event is NotificationEvent.FAILED:
        return ran, _ended(ran, cause)
    if event is NotificationEvent.SUSPENDED:
        return ran, f"{_ended(ran, cause)}; suspended, its checkpoint kept: resume it to go on"
    if event is NotificationEvent.RESTARTING:
        next_attempt = f"attempt {ran + 1}{_delay(application, at)}"
        return ran + 1, f"restarting: {next_attempt} ({_ended(ran, cause)})"
    return ran, str(event)


def _ended(attempt: int, cause: str | None) -> str:
    return f"attempt {attempt} failed: {cause}" if cause else f"attempt {attempt} ended"


def _delay(application: ApplicationRecord, at: datetime) -> str:
    if application.next_attempt_at is None:
        return ""
    seconds = max(0.0, (application.next_attempt_at - at).total_seconds())
    return f" in {seconds:g} s"
