"""What a running driver reports about its application: progress events and executor figures.

Kept apart from the attempts and events (``application_history.py``) because these rows come
from the runner's reports (``services.reports``) and the supervisor's polls of the driver's UI,
arrive every few seconds, and are written with the database's own upsert: a batch of progress
sent twice lands once, and the executor figures are replaced whole. Progress is the only
history that is pruned: an application keeps its latest reports, not all; their throughput over
the application's whole life is folded into buckets as they arrive (``store.throughput``).
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from streamjobs.domain.reports import Report
from streamjobs.store.tables import ApplicationExecutorsRow, ApplicationProgressRow
from streamjobs.store.throughput import ApplicationThroughput

Upsert = Callable[[type[Any]], postgresql.Insert | sqlite.Insert]


@dataclass(frozen=True)
class ProgressRecord:
    """One event the runner reported; ``payload`` is the event as it was sent."""

    id: int
    application_id: str
    attempt: int
    sequence: int
    at: datetime
    type: str
    query_id: str | None
    payload: dict[str, Any]


@dataclass(frozen=True)
class ExecutorFiguresRecord:
    """The latest snapshot of an application's executor figures and when it was taken."""

    application_id: str
    at: datetime
    figures: dict[str, Any]


class ApplicationReports(ApplicationThroughput):
    """Progress events and executor figures of applications (see the module)."""

    def add_progress(
        self,
        application_id: str,
        *,
        attempt: int,
        events: Sequence[Report | dict[str, Any]],
        at: datetime,
        keep_last: int = 200,
    ) -> int:
        """Store the runner's ``events`` of ``attempt`` and tell how many of them were new.

        Each event (a parsed report, or its JSON) needs a ``sequence`` and a ``type``; its query
        is its ``queryId`` (or ``id``, as the runner names it). An event already stored under
        its sequence is ignored, so a batch sent twice lands once. An event is dated by its own
        ``timestamp`` when that is an ISO 8601 time with a zone (buffered events arrive late),
        else by ``at``. Only the application's ``keep_last`` newest events are kept.
        ``NotFound`` if there is no application.
        """
        self._require_application(application_id)
        rows: dict[int, dict[str, Any]] = {}
        payloads = [_payload(event) for event in events]
        for event in payloads:
            sequence = int(event["sequence"])
            rows.setdefault(
                sequence,
                {
                    "application_id": application_id,
                    "attempt": attempt,
                    "sequence": sequence,
                    "at": _reported_at(event, default=at),
                    "type": str(event["type"]),
                    "query_id": _query_id(event),
                    "payload": event,
                },
            )
        if not rows:
            return 0
        table = ApplicationProgressRow
        statement = (
            self._upsert()(table)
            .values(builtins.list(rows.values()))
            .on_conflict_do_nothing(index_elements=["application_id", "attempt", "sequence"])
            .returning(table.id)
        )
        added = len(self._session.execute(statement).all())
        self.fold_throughput(application_id, attempt=attempt, events=events)
        self._prune_progress(application_id, keep_last)
        return added

    def progress(self, application_id: str, *, limit: int = 100) -> builtins.list[ProgressRecord]:
        """The application's ``limit`` newest progress events, newest last."""
        rows = self._session.scalars(
            select(ApplicationProgressRow)
            .where(ApplicationProgressRow.application_id == application_id)
            .order_by(ApplicationProgressRow.id.desc())
            .limit(limit)
        ).all()
        return [_progress_record(row) for row in reversed(rows)]

    def set_executor_figures(
        self, application_id: str, *, at: datetime, figures: dict[str, Any]
    ) -> ExecutorFiguresRecord:
        """Replace the application's executor figures; ``NotFound`` if there is no application."""
        self._require_application(application_id)
        table = ApplicationExecutorsRow
        insert = self._upsert()(table).values(application_id=application_id, at=at, figures=figures)
        statement = insert.on_conflict_do_update(
            index_elements=["application_id"],
            set_={"at": insert.excluded.at, "figures": insert.excluded.figures},
        )
        self._session.execute(statement)
        return ExecutorFiguresRecord(application_id, at.astimezone(UTC), copy.deepcopy(figures))

    def executor_figures(self, application_id: str) -> ExecutorFiguresRecord | None:
        """The application's latest executor figures, or None if none were ever set."""
        row = self._session.scalars(
            select(ApplicationExecutorsRow)
            .where(ApplicationExecutorsRow.application_id == application_id)
            .execution_options(populate_existing=True)
        ).one_or_none()
        if row is None:
            return None
        return ExecutorFiguresRecord(row.application_id, row.at, copy.deepcopy(row.figures))

    def _prune_progress(self, application_id: str, keep_last: int) -> None:
        table = ApplicationProgressRow
        newest_dropped = self._session.scalar(
            select(table.id)
            .where(table.application_id == application_id)
            .order_by(table.id.desc())
            .offset(keep_last)
            .limit(1)
        )
        if newest_dropped is not None:
            self._session.execute(
                delete(table)
                .where(table.application_id == application_id, table.id <= newest_dropped)
                .execution_options(synchronize_session=False)
            )

    def _upsert(self) -> Upsert:
        """The INSERT of this database that knows ``ON CONFLICT`` (both backends spell it so)."""
        if self._session.get_bind().dialect.name == "postgresql":
            return postgresql.insert
        return sqlite.insert


def _payload(event: Report | dict[str, Any]) -> dict[str, Any]:
    """The event as the runner sent it: what is stored, and what reads back."""
    return event.to_wire() if isinstance(event, BaseModel) else event


def _reported_at(event: dict[str, Any], *, default: datetime) -> datetime:
    stamp = event.get("timestamp")
    if not isinstance(stamp, str):
        return default
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return default
    return moment if moment.utcoffset() is not None else default


def _query_id(event: dict[str, Any]) -> str | None:
    query_id = event.get("queryId", event.get("id"))
    return None if query_id is None else str(query_id)


def _progress_record(row: ApplicationProgressRow) -> ProgressRecord:
    return ProgressRecord(
        id=row.id,
        application_id=row.application_id,
        attempt=row.attempt,
        sequence=row.sequence,
        at=row.at,
        type=row.type,
        query_id=row.query_id,
        payload=copy.deepcopy(row.payload),
    )
