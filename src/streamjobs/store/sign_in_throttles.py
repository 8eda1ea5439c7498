"""Sign-in attempts counted per account and per address, and account lockouts.

Kept in the store rather than in memory so that a restart forgets nothing (an attacker cannot
reset the count by crashing the server) and every server sharing the database counts together.
An attempt is counted before its password is checked, with a compare-and-set on the state it was
judged by (``claim``): of two attempts judged on the same state only one is counted, the other
judges again, so concurrent guesses never get past the limits.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite

from streamjobs.domain.sign_in_policy import ThrottleState
from streamjobs.store.base import Repository
from streamjobs.store.sign_in_tables import SignInThrottleRow

ACCOUNT = "account"
ADDRESS = "address"


class SignInThrottleRepository(Repository):
    """Counts the attempts of one (kind, subject) and locks and unlocks accounts."""

    def state(self, kind: str, subject: str) -> ThrottleState | None:
        row = self._session.execute(
            select(
                SignInThrottleRow.failures,
                SignInThrottleRow.last_failure_at,
                SignInThrottleRow.locked_at,
            ).where(SignInThrottleRow.kind == kind, SignInThrottleRow.subject == subject)
        ).one_or_none()
        if row is None:
            return None
        return ThrottleState(failures=row[0], last_failure_at=row[1], locked_at=row[2])

    def claim(
        self, kind: str, subject: str, *, seen: ThrottleState | None, failures: int, at: datetime
    ) -> bool:
        """Set the count to ``failures`` at ``at`` if the state is still ``seen``; whether it
        was (False: another attempt was counted first)."""
        row = SignInThrottleRow
        statement: Any
        if seen is None:
            values = {"kind": kind, "subject": subject, "failures": failures, "last_failure_at": at}
            if self._session.get_bind().dialect.name == "postgresql":
                statement = postgresql.insert(row).values(values).on_conflict_do_nothing()
            else:
                statement = sqlite.insert(row).values(values).on_conflict_do_nothing()
            # RETURNING, not the row count: an ORM-enabled INSERT reports none on PostgreSQL
            return self._session.execute(statement.returning(row.kind)).first() is not None
        statement = (
            update(row)
            .where(
                row.kind == kind,
                row.subject == subject,
                row.failures == seen.failures,
                row.last_failure_at == seen.last_failure_at,
            )
            .values(failures=failures, last_failure_at=at)
            .execution_options(synchronize_session=False)
        )
        result = cast(CursorResult[Any], self._session.execute(statement))
        return result.rowcount == 1

    def uncount(self, kind: str, subject: str) -> None:
        """Take back one counted attempt (it succeeded)."""
        row = SignInThrottleRow
        self._session.execute(
            update(row)
            .where(row.kind == kind, row.subject == subject, row.failures > 0)
            .values(failures=row.failures - 1)
            .execution_options(synchronize_session=False)
        )

    def lock(self, subject: str, at: datetime) -> None:
        """Lock the account ``subject`` (a lockout already there keeps its time)."""
        self._session.execute(
            update(SignInThrottleRow)
            .where(
                SignInThrottleRow.kind == ACCOUNT,
                SignInThrottleRow.subject == subject,
                SignInThrottleRow.locked_at.is_(None),
            )
            .values(locked_at=at)
            .execution_options(synchronize_session=False)
        )

    def forget(self, kind: str, subject: str) -> bool:
        """Forget every failure (and the lockout) of ``subject``; whether there was any."""
        statement = delete(SignInThrottleRow).where(
            SignInThrottleRow.kind == kind, SignInThrottleRow.subject == subject
        )
        return bool(self._rows_changed(statement))

    def prune(self, *, idle_before: datetime, limit: int) -> int:
        """Forget up to ``limit`` counts whose last attempt was before ``idle_before`` and that
        lock nothing (they count for nothing any more); how many."""
        row = SignInThrottleRow
        idle = (
            select(row.kind, row.subject)
            .where(row.last_failure_at < idle_before, row.locked_at.is_(None))
            .limit(limit)
        )
        return self._rows_changed(
            delete(row)
            .where(tuple_(row.kind, row.subject).in_(idle))
            .execution_options(synchronize_session=False)
        )

    def locked(self) -> set[str]:
        """The names of the locked accounts."""
        rows = self._session.scalars(
            select(SignInThrottleRow.subject).where(
                SignInThrottleRow.kind == ACCOUNT, SignInThrottleRow.locked_at.is_not(None)
            )
        )
        return set(rows)
