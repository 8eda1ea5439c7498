"""What an application leaves behind as it runs: its attempts and its events.

Kept apart from ``applications.py`` (the application rows themselves) because these rows only
grow, and never take part in the application's optimistic concurrency: the supervisor and the
API add to them without reading a version first. What the driver reports (progress, executor
figures) is kept the same way, in ``application_reports.py``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, false, func, select, true, update

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.states import AppState
from streamjobs.store.base import Repository
from streamjobs.store.tables import (
    ApplicationAttemptRow,
    ApplicationEventRow,
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
        "submission_id",
        "driver_host",
        "launched_on",
        "promoted_at",
    }
)
"""What ``update_attempt`` may change: everything but the attempt's key and submission time."""


@dataclass(frozen=True)
class AttemptRecord:
    """One submission of the driver; ``pid`` and ``process_started_at`` find its process again
    (on ``launched_on``), ``submission_id`` a cluster-mode driver at the standalone master."""

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
    submission_id: str | None = None
    """A cluster-mode driver's id at the standalone master (its ``pid`` is 0)."""
    driver_host: str | None = None
    """Where the driver's UI and REST API answer (None: 127.0.0.1, or a cluster-mode driver's
    worker not known yet)."""
    launched_on: str | None = None
    """The server host that started a local or client-mode driver."""
    standby: bool = False
    """Started as a standby driver (``promoted_at``: when it took over, None while held)."""
    promoted_at: datetime | None = None
    token_hash: str | None = None

    @property
    def held(self) -> bool:
        """A standby not promoted: not the application's latest attempt."""
        return self.standby and self.promoted_at is None

    @property
    def reporting_since(self) -> datetime:
        """Since when the driver's reports are its own: a promoted standby's from its
        promotion (before it, the reports were its predecessor's)."""
        return self.promoted_at or self.submitted_at


@dataclass(frozen=True)
class ApplicationEventRecord:
    """One line of an application's story, e.g. kind "restarting" with why and when."""

    id: int
    application_id: str
    at: datetime
    kind: str
    message: str


class ApplicationHistory(Repository):
    """Attempts and events of applications (see the module)."""

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
        standby: bool = False,
        token_hash: str | None = None,
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
            standby=standby,
            token_hash=token_hash,
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
        """The application's attempt with the highest number, or None before the first; a
        standby not promoted yet is not one (``standby_attempt``)."""
        row = self._session.scalars(
            _select_attempts()
            .where(ApplicationAttemptRow.application_id == application_id, _NOT_HELD)
            .order_by(ApplicationAttemptRow.number.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else _attempt_record(row)

    def standby_attempt(self, application_id: str) -> AttemptRecord | None:
        """The application's newest standby not promoted (ended or not), or None."""
        row = self._session.scalars(
            _select_attempts()
            .where(ApplicationAttemptRow.application_id == application_id, _HELD)
            .order_by(ApplicationAttemptRow.number.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else _attempt_record(row)

    def standby_attempts_in(self, states: Iterable[AppState]) -> dict[str, AttemptRecord]:
        """``standby_attempt`` of each application in one of ``states`` that has one."""
        rows = self._session.scalars(
            _select_attempts()
            .join(ApplicationRow, ApplicationRow.id == ApplicationAttemptRow.application_id)
            .where(ApplicationRow.state.in_([state.value for state in states]), _HELD)
            .order_by(ApplicationAttemptRow.number)
        )
        return {row.application_id: _attempt_record(row) for row in rows}

    def next_attempt_number(self, application_id: str) -> int:
        """The number the application's next attempt (or standby) takes."""
        highest = self._session.scalar(
            select(func.max(ApplicationAttemptRow.number)).where(
                ApplicationAttemptRow.application_id == application_id
            )
        )
        return (highest or 0) + 1

    def add_event(
        self, application_id: str, *, at: datetime, kind: str, message: str
    ) -> ApplicationEventRecord:
        """Append an event to the application's story; ``NotFound`` if there is no application."""
        self._require_application(application_id)
        row = ApplicationEventRow(application_id=application_id, at=at, kind=kind, message=message)
        self._insert(row)
        return _event_record(row)

    def events(
        self,
        application_id: str,
        *,
        after_id: int | None = None,
        before_id: int | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> builtins.list[ApplicationEventRecord]:
        """The application's events in the order they were added (or newest first); only those
        after ``after_id`` and before ``before_id`` when given."""
        statement = select(ApplicationEventRow).where(
            ApplicationEventRow.application_id == application_id
        )
        if after_id is not None:
            statement = statement.where(ApplicationEventRow.id > after_id)
        if before_id is not None:
            statement = statement.where(ApplicationEventRow.id < before_id)
        order = ApplicationEventRow.id.desc() if newest_first else ApplicationEventRow.id
        rows = self._session.scalars(statement.order_by(order).limit(limit))
        return [_event_record(row) for row in rows]

    def _find_attempt(self, application_id: str, number: int) -> ApplicationAttemptRow | None:
        return self._session.scalars(
            _select_attempts().where(
                ApplicationAttemptRow.application_id == application_id,
                ApplicationAttemptRow.number == number,
            )
        ).one_or_none()


_HELD = (ApplicationAttemptRow.standby == true()) & ApplicationAttemptRow.promoted_at.is_(None)
"""A standby attempt not promoted: held ready, not the application's latest attempt."""
_NOT_HELD = (ApplicationAttemptRow.standby == false()) | ApplicationAttemptRow.promoted_at.is_not(
    None
)

_NEWEST_ATTEMPTS = (
    select(
        ApplicationAttemptRow.application_id,
        func.max(ApplicationAttemptRow.number).label("number"),
    )
    .join(ApplicationRow, ApplicationRow.id == ApplicationAttemptRow.application_id)
    .where(ApplicationRow.state.in_(bindparam("states", expanding=True)), _NOT_HELD)
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
        submission_id=row.submission_id,
        driver_host=row.driver_host,
        launched_on=row.launched_on,
        standby=row.standby,
        promoted_at=row.promoted_at,
        token_hash=row.token_hash,
    )


def _event_record(row: ApplicationEventRow) -> ApplicationEventRecord:
    return ApplicationEventRecord(
        id=row.id, application_id=row.application_id, at=row.at, kind=row.kind, message=row.message
    )
