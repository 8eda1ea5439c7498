"""What drivers tell the server: query events, heartbeats and where their Spark UI is.

A pipeline's runner posts its events with the token only its application holds (a fresh one
per attempt, stored as a digest, refused once the application has ended). A batch is parsed
whole with ``domain.reports`` first: one event that is no report refuses the batch (422 naming
its fields) and nothing of it is stored. Each report refreshes the application's heartbeat;
progress reports are kept (the last N) and their figures (``domain.progress``), with the seconds
behind of the runner's backlog reports, become the application's latest; the first committed
micro-batch of an attempt and a query's failure become events.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Any

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import FieldError, InvalidInput, Unauthenticated
from streamjobs.domain.progress import application_figures, figures_of, with_backlog
from streamjobs.domain.reports import (
    BacklogReport,
    DriverReport,
    ProgressReport,
    Report,
    TerminatedReport,
    parse_reports,
)
from streamjobs.domain.states import TERMINAL_STATES
from streamjobs.services.application_state import move
from streamjobs.services.identity import token_digest
from streamjobs.services.resources import on_fresh_reads
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Store

MAX_EVENTS_PER_REPORT = 1000


class ReportService:
    """Receives the reports of running drivers."""

    def __init__(self, *, store: Store, clock: Clock, keep_last: int = 200) -> None:
        self._store = store
        self._clock = clock
        self._keep_last = keep_last

    def check_token(self, application_id: str, token: str) -> None:
        """Refuse (``Unauthenticated``) a token that is not ``application_id``'s own: checked
        before a report's body is read, so that only its driver can make the server read one."""
        with self._store.reading() as repos:
            application = repos.applications.find(application_id)
        if application is None or not _token_matches(application, token):
            raise Unauthenticated("the report token does not belong to this application")

    def receive(self, application_id: str, token: str, events: Sequence[Any]) -> int:
        """Store ``events`` from the driver of ``application_id``; how many were new.
        ``InvalidInput`` names each field of each event that is no report
        (``domain.reports``), and nothing of the batch is stored."""
        _check_count(events)
        reports = parse_reports(events)
        return on_fresh_reads(lambda: self._receive(application_id, token, reports))

    def _receive(self, application_id: str, token: str, events: Sequence[Report]) -> int:
        now = self._clock.now()
        with self._store.transaction() as repos:
            application = repos.applications.find(application_id)
            if application is None or not _token_matches(application, token):
                raise Unauthenticated("the report token does not belong to this application")
            attempt = repos.applications.latest_attempt(application_id)
            number = attempt.number if attempt else 0
            added = repos.applications.add_progress(
                application_id,
                attempt=number,
                events=list(events),
                at=now,
                keep_last=self._keep_last,
            )
            changes, notes = _changes_from(application, number, events)
            changes["last_heartbeat_at"] = now
            updated = move(repos, application, None, at=now, changes=changes)
            for kind, message in notes:
                repos.applications.add_event(updated.id, at=now, kind=kind, message=message)
            return added


def _token_matches(application: ApplicationRecord, token: str) -> bool:
    """Whether ``token`` is the application's own, and the application has not ended (an
    application that ended before the store cleared ended ones' tokens may still hold one)."""
    if not application.token_hash or application.state in TERMINAL_STATES:
        return False
    return hmac.compare_digest(application.token_hash, token_digest(token))


def _check_count(events: Sequence[Any]) -> None:
    if len(events) > MAX_EVENTS_PER_REPORT:
        raise InvalidInput(
            [FieldError("events", f"at most {MAX_EVENTS_PER_REPORT} events per report")]
        )


def _changes_from(
    application: ApplicationRecord, attempt: int, events: Sequence[Report]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    latest = dict(application.latest or {})
    if latest.get("attempt") != attempt:
        latest = {"attempt": attempt, "queries": {}}
    queries = dict(latest.get("queries") or {})
    changes: dict[str, Any] = {}
    notes: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, DriverReport) and event.spark_application_id:
            changes["spark_app_id"] = event.spark_application_id
        elif isinstance(event, ProgressReport):
            name = event.query_name
            queries[name] = figures_of(event.progress, queries.get(name))
            if "firstBatchCommittedAt" not in latest:
                latest["firstBatchCommittedAt"] = event.progress.timestamp
                notes.append(
                    (
                        "first-batch-committed",
                        f"attempt {attempt}: micro-batch {event.progress.batch_id} committed",
                    )
                )
        elif isinstance(event, BacklogReport) and event.query_name in queries:
            queries[event.query_name] = with_backlog(queries[event.query_name], event)
        elif isinstance(event, TerminatedReport) and event.exception:
            notes.append(("query-failed", f"query {event.name} failed: {event.exception}"[:2000]))
    if queries:
        latest["queries"] = queries
        latest.update(application_figures(queries))
        changes["latest"] = latest
    return changes, notes
