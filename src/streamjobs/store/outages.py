"""Storage failures the server can outlive: a full disk, a locked or read-only database, a
database server out of reach, every pooled connection in use, a statement cancelled. Each
becomes ``StoreUnavailable`` (503 at the API) saying what is wrong, instead of the driver's
exception (500), and the connections that met one are replaced, so the server recovers once the
cause is gone, without a restart.

A transaction PostgreSQL rolled back to break a deadlock or a serialization failure wrote
nothing, so it can simply run again: ``StoreContention`` says so, and
``retried_on_contention`` runs such a transaction again a few times before it answers 503.

SQLite is told apart by its result code, PostgreSQL by its SQLSTATE. Whatever else a driver
raises (a constraint, a bug in a statement) is left as it is.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Engine, event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from streamjobs.domain.errors import StoreUnavailable

log = logging.getLogger(__name__)

DISK_FULL = "the store's disk is full: writes fail until space is freed (reads still work)"
LOCKED = "the database is locked by another process: writes wait for it to let go"
READ_ONLY = "the database is read-only: writes fail until it is writable again (reads still work)"
UNREACHABLE = "the database server cannot be reached"
POOL_EXHAUSTED = (
    "every connection to the database is in use and none was freed in time: the server is "
    "overloaded or a database lock holds its connections"
)
CONTENTION = "the database rolled the change back to settle a conflict with another change"

SQLITE_OUTAGES: dict[int, tuple[str, int]] = {
    sqlite3.SQLITE_FULL: (DISK_FULL, 60),
    sqlite3.SQLITE_BUSY: (LOCKED, 5),
    sqlite3.SQLITE_LOCKED: (LOCKED, 5),
    sqlite3.SQLITE_READONLY: (READ_ONLY, 30),
    sqlite3.SQLITE_IOERR: ("the store's disk failed to read or write (an I/O error)", 30),
    sqlite3.SQLITE_CANTOPEN: ("the database file cannot be opened (gone, or not readable)", 30),
    sqlite3.SQLITE_CORRUPT: ("the database file is corrupt: restore it from a backup", 300),
    sqlite3.SQLITE_NOTADB: ("the database file is not a SQLite database any more", 300),
}
"""By primary result code (the low byte of an extended one): what to say, and Retry-After."""

POSTGRESQL_OUTAGES: dict[str, tuple[str, int]] = {
    "53100": ("the database server's disk is full: writes fail until space is freed", 60),
    "53200": ("the database server is out of memory", 10),
    "53300": ("the database server has no connection to spare", 5),
    "25006": (READ_ONLY, 30),
    "55P03": ("a lock in the database was not granted in time: another process holds it", 5),
    "57P01": (f"{UNREACHABLE}: it is shutting down", 5),
    "57P02": (f"{UNREACHABLE}: it crashed", 5),
    "57P03": (f"{UNREACHABLE}: it is starting up or shutting down", 5),
    "57014": ("a statement was cancelled (a statement timeout, or by the database's admin)", 5),
}
"""By SQLSTATE; class 08 (connection exceptions) is ``UNREACHABLE`` too."""

POSTGRESQL_CONTENTION: dict[str, str] = {
    "40P01": f"{CONTENTION} (a deadlock)",
    "40001": f"{CONTENTION} (a serialization failure)",
}
"""By SQLSTATE: a transaction the database rolled back whole, which may simply run again."""
CONTENTION_ATTEMPTS = 3
"""How often ``retried_on_contention`` runs a transaction the database keeps rolling back."""

POSTGRESQL_READ_ONLY = "25006"


class StoreContention(StoreUnavailable):
    """The database rolled a transaction back to settle a conflict with another one (a deadlock
    or a serialization failure): nothing of it was written, and it may run again at once."""


Outcome = TypeVar("Outcome")


def retried_on_contention(
    change: Callable[[], Outcome], *, attempts: int = CONTENTION_ATTEMPTS
) -> Outcome:
    """Run ``change`` (whole transactions, and nothing outside the store) again while the
    database rolls it back for contention; the last ``StoreContention`` is raised (503)."""
    for _ in range(attempts - 1):
        try:
            return change()
        except StoreContention as contention:
            log.info("transaction rolled back, running it again: %s", contention.detail)
    return change()


def outage_of(error: DBAPIError, *, reading: bool = False) -> StoreUnavailable | None:
    """What ``error`` says about the store's availability; None when it is not an outage.

    With ``reading``, PostgreSQL's refusal to write is not one: the reading connections refuse
    every write by design, and a write through them is a bug.
    """
    original = error.orig
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        known = SQLITE_OUTAGES.get(code & 0xFF) if isinstance(code, int) else None
    else:
        state = getattr(original, "sqlstate", None)
        if reading and state == POSTGRESQL_READ_ONLY:
            return None
        if state in POSTGRESQL_CONTENTION:
            return StoreContention(POSTGRESQL_CONTENTION[state], retry_after_seconds=1)
        known = POSTGRESQL_OUTAGES.get(state) if isinstance(state, str) else None
        if known is None and _unreachable(error, state):
            known = (UNREACHABLE, 5)
    if known is None:
        return None
    detail, retry_after = known
    return StoreUnavailable(detail, retry_after_seconds=retry_after)


def _unreachable(error: DBAPIError, state: str | None) -> bool:
    if error.connection_invalidated:
        return True
    if state is None:  # psycopg's own failures to connect carry no SQLSTATE
        return type(error.orig).__name__ == "OperationalError"
    return state.startswith("08")


@contextmanager
def translated_outages(*, reading: bool = False) -> Iterator[None]:
    """Raise ``StoreUnavailable`` for an outage met inside the block (see ``outage_of``)."""
    try:
        yield
    except PoolTimeout as error:  # raised before any connection: not a DBAPIError
        log.warning("store unavailable: %s (%s)", POOL_EXHAUSTED, error)
        raise StoreUnavailable(POOL_EXHAUSTED, retry_after_seconds=5) from error
    except DBAPIError as error:
        outage = outage_of(error, reading=reading)
        if outage is None:
            raise
        # the message only: the error's frames hold the driver's cursor, which keeps an
        # invalidated SQLite connection (and its files) open for as long as the error lives
        log.warning("store unavailable: %s (%s)", outage.detail, str(error.orig))
        raise outage from error


def replace_connections_after_outages(engine: Engine) -> None:
    """Have ``engine`` (one that writes) drop its pooled connections once one meets a read-only
    database or one moved away, so the next transaction opens the database as it is now; on
    SQLite, also a connection opened while the file was read-only, once it is writable again."""
    event.listen(engine, "handle_error", _drop_read_only_connections)
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        database = str(engine.url.database)
        event.listen(engine, "connect", _noting_read_only_opening(database))
        event.listen(engine, "checkout", _reopening_when_writable(database))


def _drop_read_only_connections(context: ExceptionContext) -> None:
    original = context.original_exception
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", 0)
        read_only = isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_READONLY
    else:
        read_only = getattr(original, "sqlstate", None) == POSTGRESQL_READ_ONLY
    if read_only:
        context.is_disconnect = True


def _noting_read_only_opening(database: str) -> Any:
    def note(_dbapi_connection: Any, connection_record: Any) -> None:
        # SQLite quietly opens a file it may not write read-only: its every write would fail
        connection_record.info["read_only"] = os.path.exists(database) and not os.access(
            database, os.W_OK
        )

    return note


def _reopening_when_writable(database: str) -> Any:
    def check(_dbapi_connection: Any, connection_record: Any, _proxy: Any) -> None:
        if connection_record.info.get("read_only") and os.access(database, os.W_OK):
            raise DisconnectionError(f"{database} is writable again")

    return check
