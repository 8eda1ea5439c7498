"""What every repository shares: the session it works in and the two ways a write can miss.

A repository is bound to one SQLAlchemy session, so all repositories handed out by one
``Store.transaction()`` write in the same transaction. Writes that can lose a race end in one of
two ways, and both are turned into streamjobs errors here: an insert that hits a unique
constraint (``AlreadyExists``) and a versioned update or delete that matches no row (``NotFound``
if the row is gone, ``StaleVersion`` if someone else changed it first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    Delete,
    Executable,
    Result,
    Update,
    delete,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from streamjobs.domain.errors import AlreadyExists, NotFound, StaleVersion
from streamjobs.store.notification_tables import NotificationDestinationRow
from streamjobs.store.tables import (
    ApplicationRow,
    Base,
    ConnectionRow,
    JobRow,
    ResourceBundleRow,
    SecretRow,
)


class Repository:
    """A set of queries over some tables, run in the session of the current transaction."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def _read(
        self, statement: Executable, parameters: Mapping[str, Any] | None = None
    ) -> Result[*tuple[Any, ...]]:
        """Run a SELECT of plain columns in this transaction and give its rows.

        On the session's connection rather than through ``Session.execute``, whose ORM layer
        processes every row again; writes still pending in the session are flushed first, as
        ``Session.execute`` would."""
        session = self._session
        if session.new or session.dirty or session.deleted:
            session.flush()
        return session.connection().execute(statement, parameters)

    def _insert(self, row: Base) -> None:
        """Insert ``row`` now and read it back as stored (timestamps in UTC, defaults filled in)."""
        self._session.add(row)
        self._session.flush()
        self._session.refresh(row)

    def _insert_unique(self, row: Base, *, kind: str, name: str) -> None:
        """Insert ``row`` like ``_insert``; a unique-constraint violation is AlreadyExists.

        Repositories look for an existing row first, so this only fires when another transaction
        inserted the same name in the meantime. The transaction cannot be used after that: let the
        error leave ``Store.transaction()``, which rolls it back.
        """
        try:
            self._insert(row)
        except IntegrityError as error:
            raise AlreadyExists(kind, name) from error

    def _rows_changed(self, statement: Update | Delete) -> int:
        """Run an UPDATE or DELETE and tell how many rows it matched."""
        result = cast(CursorResult[Any], self._session.execute(statement))
        return result.rowcount

    def _require_application(self, application_id: str) -> None:
        """``NotFound`` unless the application exists: what is added to one checks it first."""
        found = select(ApplicationRow.id).where(ApplicationRow.id == application_id)
        if self._session.scalar(found) is None:
            raise NotFound("application", application_id)


class VersionedRepository(Repository):
    """A repository of rows that carry a ``version``, changed with optimistic concurrency.

    A change names the version it was based on and is written with ``UPDATE … WHERE key = ? AND
    version = ?`` (or the same ``DELETE``), so of two concurrent changes exactly one lands and the
    other gets a ``StaleVersion`` (a ``Conflict``); nothing of the loser is written. The key is
    the table's primary key: an id, or a bundle's name.
    """

    _table: ClassVar[
        type[JobRow]
        | type[ConnectionRow]
        | type[ApplicationRow]
        | type[SecretRow]
        | type[ResourceBundleRow]
        | type[NotificationDestinationRow]
    ]
    _kind: ClassVar[str]
    """What the rows are called in messages: "job", "connection"."""

    @property
    def _key(self) -> ColumnElement[str]:
        """The primary key as a mapped attribute, so the session can apply an UPDATE's values
        to the rows it holds without reading them back."""
        key = getattr(self._table, str(self._table.__mapper__.primary_key[0].key))
        return cast("ColumnElement[str]", key)

    def _update_versioned(
        self, record_id: str, name: str, *, expected_version: int, **values: Any
    ) -> None:
        """Set ``values`` and bump the version, if the row is still at ``expected_version``."""
        table = self._table
        statement = (
            update(table)
            .where(self._key == record_id, table.version == expected_version)
            .values(version=expected_version + 1, **values)
        )
        if not self._rows_changed(statement):
            raise self._lost_race(record_id, name, expected_version)

    def _update_bumping(self, record_id: str, name: str, **values: Any) -> None:
        """Set ``values`` and bump the version, whichever it is now (no version was named)."""
        table = self._table
        statement = (
            update(table).where(self._key == record_id).values(version=table.version + 1, **values)
        )
        if not self._rows_changed(statement):
            raise NotFound(self._kind, name)

    def _delete_versioned(self, record_id: str, name: str, expected_version: int | None) -> None:
        """Delete the row; with ``expected_version``, only if it is still at that version."""
        table = self._table
        statement = delete(table).where(self._key == record_id)
        if expected_version is not None:
            statement = statement.where(table.version == expected_version)
        if not self._rows_changed(statement):
            raise self._lost_race(record_id, name, expected_version)

    def _lost_race(
        self, record_id: str, name: str, expected_version: int | None
    ) -> NotFound | StaleVersion:
        """Why a change matched no row: it was deleted, or someone else changed it first."""
        current = self._session.scalar(select(self._table.version).where(self._key == record_id))
        if current is None:
            return NotFound(self._kind, name)
        return StaleVersion(
            f"{self._kind} {name!r} was changed by someone else: the change was based on version "
            f"{expected_version}, but the {self._kind} is now at version {current}; read it "
            "again and retry"
        )
