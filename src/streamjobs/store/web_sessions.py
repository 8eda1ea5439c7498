"""Web sessions kept server-side, so ending one (sign-out, a password change, a deleted user, an
admin's "sign out everywhere") takes effect on the very next request.

A session belongs to a user id, never a name: a user deleted and created again under the same name
is a new id, and the old sessions went with the old row (a cascading foreign key). The store keeps
only the SHA-256 digest of the secret the cookie carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update

from streamjobs.store.base import Repository
from streamjobs.store.identity import UserRecord, _user_record
from streamjobs.store.sign_in_tables import WebSessionRow
from streamjobs.store.tables import UserRow


@dataclass(frozen=True)
class WebSessionRecord:
    """A session: whose (by id), the CSRF token its forms carry, and its times."""

    id_digest: str
    user_id: str
    csrf: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


class WebSessionRepository(Repository):
    """Starts, finds, touches and ends web sessions."""

    def add(
        self, *, id_digest: str, user_id: str, csrf: str, at: datetime, expires_at: datetime
    ) -> WebSessionRecord:
        row = WebSessionRow(
            id_digest=id_digest,
            user_id=user_id,
            csrf=csrf,
            created_at=at,
            last_seen_at=at,
            expires_at=expires_at,
        )
        self._insert(row)
        return _record(row)

    def find(self, id_digest: str) -> tuple[WebSessionRecord, UserRecord] | None:
        """The session with this digest and its user (expired or not), or None."""
        found = self._session.execute(
            select(WebSessionRow, UserRow)
            .join(UserRow, WebSessionRow.user_id == UserRow.id)
            .where(WebSessionRow.id_digest == id_digest)
        ).one_or_none()
        if found is None:
            return None
        session, user = found
        return _record(session), _user_record(user)

    def touch(self, id_digest: str, at: datetime) -> None:
        """Record that the session was used at ``at``."""
        self._session.execute(
            update(WebSessionRow)
            .where(WebSessionRow.id_digest == id_digest)
            .values(last_seen_at=at)
            .execution_options(synchronize_session=False)
        )

    def end(self, id_digest: str) -> bool:
        """End one session; whether there was one."""
        return bool(
            self._rows_changed(delete(WebSessionRow).where(WebSessionRow.id_digest == id_digest))
        )

    def end_all_of(self, user_id: str) -> int:
        """End every session of the user; how many there were."""
        return self._rows_changed(delete(WebSessionRow).where(WebSessionRow.user_id == user_id))

    def end_stale(self, *, now: datetime, idle_since: datetime) -> int:
        """Remove the sessions that have expired or were last used before ``idle_since``."""
        return self._rows_changed(
            delete(WebSessionRow).where(
                (WebSessionRow.expires_at <= now) | (WebSessionRow.last_seen_at < idle_since)
            )
        )


def _record(row: WebSessionRow) -> WebSessionRecord:
    return WebSessionRecord(
        id_digest=row.id_digest,
        user_id=row.user_id,
        csrf=row.csrf,
        created_at=row.created_at,
        last_seen_at=row.last_seen_at,
        expires_at=row.expires_at,
    )
