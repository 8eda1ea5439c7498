"""What every repository shares: the session it works in and the two ways a write can miss.

A repository is bound to one SQLAlchemy session, so all repositories handed out by one
``Store.transaction()`` write in the same transaction. Writes that can lose a race end in one of
two ways, and both are turned into streamjobs errors here: an insert that hits a unique
constraint (``AlreadyExists``) and a conditional update or delete that matches no row (the caller
decides between ``NotFound`` and ``Conflict``).
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, Delete, Update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from streamjobs.domain.errors import AlreadyExists
from streamjobs.store.tables import Base


class Repository:
    """A set of queries over some tables, run in the session of the current transaction."""

    def __init__(self, session: Session) -> None:
        self._session = session

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
