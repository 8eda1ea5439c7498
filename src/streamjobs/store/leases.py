"""The supervisor's lease: which server runs the supervisor, and the fencing token its writes carry.

Several servers may share one PostgreSQL store; exactly one of them supervises at a time. It
holds the lease row ``supervisor`` (``SupervisorLeaseRow``) until ``expires_at`` and renews it
before then; a server whose lease ran out (crashed, cut off, paused) loses it to the first
other server that asks. Every time the lease is taken its ``token`` goes up by one, and never
down: whatever the supervisor writes is written in a transaction that first checks, in the same
transaction, that the row still carries the token the writer led with (``check_fence``, through
``Store.fenced``). A former leader that wakes up after another took over finds a newer token,
and its write is refused (``Fenced``) with nothing written.

Time is the database's own (``clock_timestamp()`` on PostgreSQL, ``'now'`` on SQLite), never a
server's, so the servers' clocks need not agree.

On PostgreSQL the check reads the row ``FOR SHARE``: a takeover's UPDATE of the row waits for
the fenced transactions in flight, so none of them commits after the takeover. A leader paused
(SIGSTOP) in the middle of such a transaction would hold that lock for as long as it is paused,
and keep the others from ever taking over; two limits end that:

- every fenced transaction, and every change of the lease, sets
  ``idle_in_transaction_session_timeout`` for itself: a transaction left idle that long (its
  process stopped) is ended by the database server, which drops the connection and its locks.
  The supervisor's transactions never wait on anything but the database between their
  statements, so the limit (a lease's length) only ever ends stopped or hung ones.
- taking or renewing the lease sets ``lock_timeout``: a server waits for the lock no longer than
  its next attempt is due, and tries again then (``StoreUnavailable`` meanwhile), rather than
  hanging on a lock whose holder may never come back. The two together bound a takeover by the
  lease plus one round of the keeper, whatever the former leader does.

SQLite has neither; it serializes writers itself, and a SQLite store has one supervising server
only (``supervisor.single_server``).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Float, cast, func, literal, or_, select, type_coerce, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from streamjobs.domain.errors import StreamjobsError
from streamjobs.store.base import Repository
from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.lease_tables import SupervisorLeaseRow

if TYPE_CHECKING:
    from streamjobs.store.db import Store

log = logging.getLogger(__name__)

SUPERVISOR_LEASE = "supervisor"
"""The one lease there is: who runs the supervisor."""


class Fenced(StreamjobsError):
    """A fenced write was refused: the lease it was made under has passed to a newer token
    (another server leads now). Nothing of the transaction was written."""

    title = "Not the leader"


@dataclass(frozen=True)
class Leader:
    """The server that holds a lease: its name, and where it answers."""

    name: str
    url: str | None


@dataclass(frozen=True)
class Lease:
    """A lease as the database has it now."""

    holder: str | None
    """The holding server's name (None: released)."""
    holder_url: str | None
    token: int
    acquired_at: datetime | None
    expires_at: datetime | None
    expired: bool
    """Whether the lease has run out or was released: anyone may take it."""

    @property
    def leader(self) -> Leader | None:
        """Who leads by this lease (None: nobody, it ran out or was released)."""
        if self.expired or self.holder is None:
            return None
        return Leader(self.holder, self.holder_url)


@dataclass
class Fence:
    """The lease token writes are made under, in one store (``Store.fenced``)."""

    store: Store
    token: int
    hold_limit_seconds: float
    """How long a fenced transaction may sit idle before PostgreSQL ends it."""
    lease: str = SUPERVISOR_LEASE
    refusal: Fenced | None = None
    """Set by the first write refused under this fence: the later ones are refused at once."""


current_fence: ContextVar[Fence | None] = ContextVar("streamjobs_fence", default=None)
"""The fence of the code running now: set by ``Store.fenced`` around the supervisor's ticks."""


class LeaseRepository(Repository):
    """Takes, renews, releases and reads leases, on the database's clock."""

    def acquire(
        self, name: str, holder: str, holder_url: str, seconds: float, *, wait_seconds: float
    ) -> int | None:
        """Take the lease for ``seconds`` when it is free (released) or has run out; its new
        token, raised by one (None: it is held). A lease held under ``holder``'s own name is
        held too: a server cannot tell its own earlier life from another server given the same
        name, so it waits as any other would. ``wait_seconds`` bounds the wait for fenced
        transactions in flight (PostgreSQL: ``StoreUnavailable`` once it is over)."""
        return self._take(name, holder, holder_url, seconds, wait_seconds, whoever_holds=False)

    def seize(self, name: str, holder: str, holder_url: str, seconds: float) -> int:
        """Take the lease whoever holds it; its new token. Only for a caller who knows that no
        other holder can be alive: the server holding a SQLite store's supervisor file lock."""
        token = self._take(name, holder, holder_url, seconds, None, whoever_holds=True)
        assert token is not None
        return token

    def renew(
        self, name: str, holder: str, token: int, seconds: float, *, wait_seconds: float
    ) -> bool:
        """Extend the lease to ``seconds`` from now while ``holder`` still holds it under
        ``token``; whether it did (False: it was taken, or released, since)."""
        self._limit_waits(wait_seconds)
        row = SupervisorLeaseRow
        statement = (
            update(row)
            .where(row.name == name, row.holder == holder, row.token == token)
            .values(expires_at=_database_now(self._dialect, plus_seconds=seconds))
            .returning(row.token)
            .execution_options(synchronize_session=False)
        )
        return self._session.execute(statement).first() is not None

    def release(self, name: str, holder: str, token: int) -> bool:
        """Give the lease up, if ``holder`` still holds it under ``token`` (a stopping
        server): another server may take it at once. The token stays where it is."""
        row = SupervisorLeaseRow
        statement = (
            update(row)
            .where(row.name == name, row.holder == holder, row.token == token)
            .values(holder=None, holder_url=None, expires_at=None)
            .returning(row.token)
            .execution_options(synchronize_session=False)
        )
        return self._session.execute(statement).first() is not None

    def current(self, name: str) -> Lease | None:
        """The lease as it is now (None: it has never been taken)."""
        row = SupervisorLeaseRow
        now = _database_now(self._dialect)
        found = self._read(
            select(
                row.holder,
                row.holder_url,
                row.token,
                row.acquired_at,
                row.expires_at,
                or_(row.holder.is_(None), row.expires_at.is_(None), row.expires_at <= now),
            ).where(row.name == name)
        ).first()
        if found is None:
            return None
        holder, url, token, acquired_at, expires_at, expired = found
        return Lease(
            holder=holder,
            holder_url=url,
            token=token,
            acquired_at=acquired_at,
            expires_at=expires_at,
            expired=bool(expired),
        )

    @property
    def _dialect(self) -> str:
        return self._session.get_bind().dialect.name

    def _take(
        self,
        name: str,
        holder: str,
        holder_url: str,
        seconds: float,
        wait_seconds: float | None,
        *,
        whoever_holds: bool,
    ) -> int | None:
        if wait_seconds is not None:
            self._limit_waits(wait_seconds)
        self._ensure_row(name)
        row = SupervisorLeaseRow
        now = _database_now(self._dialect)
        statement = update(row).where(row.name == name)
        if not whoever_holds:
            statement = statement.where(
                or_(row.holder.is_(None), row.expires_at.is_(None), row.expires_at <= now)
            )
        taken = self._session.execute(
            statement.values(
                holder=holder,
                holder_url=holder_url,
                token=row.token + 1,
                acquired_at=now,
                expires_at=_database_now(self._dialect, plus_seconds=seconds),
            )
            .returning(row.token)
            .execution_options(synchronize_session=False)
        ).first()
        return None if taken is None else int(taken[0])

    def _ensure_row(self, name: str) -> None:
        """Insert the lease's row, unheld at token 0, unless it is there."""
        values = {"name": name, "token": 0}
        insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        self._session.execute(insert(SupervisorLeaseRow).values(values).on_conflict_do_nothing())

    def _limit_waits(self, wait_seconds: float) -> None:
        """PostgreSQL: wait for a lock no longer than ``wait_seconds``, and end this transaction
        if it is left idle longer than that (see the module docstring)."""
        if self._dialect == "postgresql":
            _set_local(self._session, "lock_timeout", wait_seconds)
            _set_local(self._session, "idle_in_transaction_session_timeout", wait_seconds)


def check_fence(session: Session, fence: Fence) -> None:
    """Refuse (``Fenced``) the transaction of ``session`` unless the lease still carries the
    fence's token; on PostgreSQL the lease row stays share-locked until the transaction ends,
    and the transaction is ended by the database if it is left idle too long. After a first
    refusal, every later transaction of the same fence is refused without asking again."""
    if fence.refusal is not None:
        raise Fenced(fence.refusal.detail)
    dialect = session.get_bind().dialect.name
    row = SupervisorLeaseRow
    query: Any = select(row.token, row.holder, row.holder_url).where(row.name == fence.lease)
    if dialect == "postgresql":
        _set_local(session, "idle_in_transaction_session_timeout", fence.hold_limit_seconds)
        query = query.with_for_update(read=True)
    found = session.connection().execute(query).first()
    if found is not None and found[0] == fence.token:
        return
    token, holder, url = found if found is not None else (None, None, None)
    now_held = (
        f"{holder} ({url}) holds it under token {token}"
        if holder
        else f"nobody holds it (token {token})"
    )
    log.warning(
        "supervisor: a write was refused because another server leads now: it was made under "
        "lease token %d, and %s",
        fence.token,
        now_held,
    )
    fence.refusal = Fenced(
        f"the supervisor's write was refused: it was made under lease token {fence.token}, and "
        f"{now_held}; another server leads now"
    )
    raise fence.refusal


def _set_local(session: Session, parameter: str, seconds: float) -> None:
    milliseconds = max(1, round(seconds * 1000))
    session.connection().exec_driver_sql(f"SET LOCAL {parameter} = {milliseconds}")


def _database_now(dialect: str, *, plus_seconds: float = 0.0) -> ColumnElement[datetime]:
    """The database's current time (plus ``plus_seconds``), as a timestamp of the lease's
    columns: ``clock_timestamp()`` on PostgreSQL (the time of the statement, not of its
    transaction: a takeover may have waited on a lock), ``'now'`` with milliseconds on SQLite
    (in the text format its timestamps are kept in)."""
    if dialect == "postgresql":
        now: ColumnElement[Any] = func.clock_timestamp()
        if plus_seconds:
            interval = func.make_interval(0, 0, 0, 0, 0, 0, cast(literal(plus_seconds), Float))
            now = now + interval
        return type_coerce(now, UtcDateTime)
    modifiers = [f"{plus_seconds:+.3f} seconds"] if plus_seconds else []
    return type_coerce(func.strftime("%Y-%m-%d %H:%M:%f", "now", *modifiers), UtcDateTime)
