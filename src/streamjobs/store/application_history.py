"""What an application leaves behind as it runs: attempts, events, reported progress, executors.

Kept apart from ``applications.py`` (the application rows themselves) because these rows only
grow, or are replaced whole, and never take part in the application's optimistic concurrency:
the supervisor, the API and the runner's reports add to them without reading a version first.
Progress is the only one that is pruned: an application keeps its latest reports, not all.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.states import AppState
from streamjobs.store.base import Repository
from streamjobs.store.tables import (
    ApplicationAttemptRow,
    ApplicationEventRow,
    ApplicationExecutorsRow,
    ApplicationProgressRow,
    ApplicationRow,
)

ATTEMPT_CHANGEABLE_FIELDS = frozenset(
    {
        "pid",
        "process_started_at",
        "directory",
        "ui_port",
        "master",
        "running_at",
        "ended_at",
        "exit_code",
        "outcome",
    }
)
"""What ``update_attempt`` may change: everything but the attempt's key and submission time."""

Upsert = Callable[[type[Any]], postgresql.Insert | sqlite.Insert]


@dataclass(frozen=True)
class AttemptRecord:
    """One submission of the driver; ``pid`` and ``process_started_at`` find its process again."""

    application_id: str
    number: int
    pid: int | None
    process_started_at: float | None
    directory: str
    ui_port: int | None
    master: str | None
    submitted_at: datetime
    running_at: datetime | None
    ended_at: datetime | None
    exit_code: int | None
    outcome: str | None
    fence: str | None = None
    """Recorded before the driver starts; its wrapper carries it (``Launcher.recover``)."""


@dataclass(frozen=True)
class ApplicationEventRecord:
    """One line of an application's story, e.g. kind "restarting" with why and when."""

    id: int
    application_id: str
    at: datetime
    kind: str
    message: str


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


class ApplicationHistory(Repository):
    """Attempts, events, progress and executor figures of applications (see the module)."""

    def add_attempt(
        self,
        application_id: str,
        *,
        number: int,
        submitted_at: datetime,
        directory: str,
        pid: int | None = None,
        process_started_at: float | None = None,
        ui_port: int | None = None,
        master: str | None = None,
        fence: str | None = None,
    ) -> AttemptRecord:
        """Record attempt ``number`` of the application.

        ``NotFound`` if there is no such application; ``AlreadyExists`` if the attempt is there.
        """
        self._require_application(application_id)
        attempt = f"{application_id} #{number}"
        if self._find_attempt(application_id, number) is not None:
            raise AlreadyExists("attempt", attempt)
        row = ApplicationAttemptRow(
            application_id=application_id,
            number=number,
            pid=pid,
            process_started_at=process_started_at,
            directory=directory,
            ui_port=ui_port,
            master=master,
            submitted_at=submitted_at,
            fence=fence,
        )
        self._insert_unique(row, kind="attempt", name=attempt)
        return _attempt_record(row)

    def update_attempt(self, application_id: str, number: int, **changes: Any) -> AttemptRecord:
        """Change the attempt's fields named in ``ATTEMPT_CHANGEABLE_FIELDS``.

        ``NotFound`` if there is no such attempt; ``TypeError`` for any other field.
        """
        unknown = changes.keys() - ATTEMPT_CHANGEABLE_FIELDS
        if unknown:
            raise TypeError(f"an attempt's {', '.join(sorted(unknown))} cannot be changed")
        table = ApplicationAttemptRow
        statement = (
            update(table)
            .where(table.application_id == application_id, table.number == number)
            .values(**changes)
            .execution_options(synchronize_session=False)
        )
        if changes and not self._rows_changed(statement):
            raise NotFound("attempt", f"{application_id} #{number}")
        row = self._find_attempt(application_id, number)
        if row is None:
            raise NotFound("attempt", f"{application_id} #{number}")
        return _attempt_record(row)

    def attempts(self, application_id: str) -> builtins.list[AttemptRecord]:
        """The application's attempts, first to last."""
        rows = self._session.scalars(
            _select_attempts()
            .where(ApplicationAttemptRow.application_id == application_id)
            .order_by(ApplicationAttemptRow.number)
        )
        return [_attempt_record(row) for row in rows]

    def latest_attempts_in(self, states: Iterable[AppState]) -> dict[str, AttemptRecord]:
        """The attempt with the highest number of each application in one of ``states``, by
        application id, in one query that names the states, not the applications (the
        supervisor asks for a thousand each tick, and sending their ids cost more than the
        query); applications without an attempt are left out."""
        found = self._read(_LATEST_ATTEMPTS, {"states": [state.value for state in states]})
        return {row.application_id: AttemptRecord(*row) for row in found.all()}

    def latest_attempt(self, application_id: str) -> AttemptRecord | None:
        """The application's attempt with the highest number, or None before the first."""
        row = self._session.scalars(
            _select_attempts()
            .where(ApplicationAttemptRow.application_id == application_id)
            .order_by(ApplicationAttemptRow.number.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else _attempt_record(row)

    def add_event(
        self, application_id: str, *, at: datetime, kind: str, message: str
    ) -> ApplicationEventRecord:
        """Append an event to the application's story; ``NotFound`` if there is no application."""
        self._require_application(application_id)
        row = ApplicationEventRow(application_id=application_id, at=at, kind=kind, message=message)
        self._insert(row)
        return _event_record(row)

    def events(
        self, application_id: str, *, after_id: int | None = None, limit: int = 1000
    ) -> builtins.list[ApplicationEventRecord]:
        """The application's events in the order they were added; after ``after_id`` if given."""
        statement = select(ApplicationEventRow).where(
            ApplicationEventRow.application_id == application_id
        )
        if after_id is not None:
            statement = statement.where(ApplicationEventRow.id > after_id)
        rows = self._session.scalars(statement.order_by(ApplicationEventRow.id).limit(limit))
        return [_event_record(row) for row in rows]

    def add_progress(
        self,
        application_id: str,
        *,
        attempt: int,
        events: Sequence[dict[str, Any]],
        at: datetime,
        keep_last: int = 200,
    ) -> int:
        """Store the runner's ``events`` of ``attempt`` and tell how many of them were new.

        Each event needs a ``sequence`` and a ``type``; its query is its ``queryId`` (or ``id``,
        as the runner names it). An event already stored under its sequence is ignored, so a
        batch sent twice lands once. An event is dated by its own ``timestamp`` when that is
        an ISO 8601 time with a zone (buffered events arrive late), else by ``at``. Only the
        application's ``keep_last`` newest events are kept. ``NotFound`` if no application.
        """
        self._require_application(application_id)
        rows: dict[int, dict[str, Any]] = {}
        for event in events:
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

    def _require_application(self, application_id: str) -> None:
        found = select(ApplicationRow.id).where(ApplicationRow.id == application_id)
        if self._session.scalar(found) is None:
            raise NotFound("application", application_id)

    def _find_attempt(self, application_id: str, number: int) -> ApplicationAttemptRow | None:
        return self._session.scalars(
            _select_attempts().where(
                ApplicationAttemptRow.application_id == application_id,
                ApplicationAttemptRow.number == number,
            )
        ).one_or_none()

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


_NEWEST_ATTEMPTS = (
    select(
        ApplicationAttemptRow.application_id,
        func.max(ApplicationAttemptRow.number).label("number"),
    )
    .join(ApplicationRow, ApplicationRow.id == ApplicationAttemptRow.application_id)
    .where(ApplicationRow.state.in_(bindparam("states", expanding=True)))
    .group_by(ApplicationAttemptRow.application_id)
    .subquery()
)
_LATEST_ATTEMPTS = select(
    *[ApplicationAttemptRow.__table__.c[each.name] for each in fields(AttemptRecord)]
).join(
    _NEWEST_ATTEMPTS,
    (ApplicationAttemptRow.application_id == _NEWEST_ATTEMPTS.c.application_id)
    & (ApplicationAttemptRow.number == _NEWEST_ATTEMPTS.c.number),
)
"""The newest attempt of each application in some states, as plain rows in ``AttemptRecord``'s
field order (the supervisor reads one per live application every tick); built once."""


def _select_attempts() -> Select[ApplicationAttemptRow]:
    """Select attempts, refreshing rows the session read before: others may have changed them."""
    return select(ApplicationAttemptRow).execution_options(populate_existing=True)


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


def _attempt_record(row: ApplicationAttemptRow) -> AttemptRecord:
    return AttemptRecord(
        application_id=row.application_id,
        number=row.number,
        pid=row.pid,
        process_started_at=row.process_started_at,
        directory=row.directory,
        ui_port=row.ui_port,
        master=row.master,
        submitted_at=row.submitted_at,
        running_at=row.running_at,
        ended_at=row.ended_at,
        exit_code=row.exit_code,
        outcome=row.outcome,
        fence=row.fence,
    )


def _event_record(row: ApplicationEventRow) -> ApplicationEventRecord:
    return ApplicationEventRecord(
        id=row.id, application_id=row.application_id, at=row.at, kind=row.kind, message=row.message
    )


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
