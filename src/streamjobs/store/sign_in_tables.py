"""The rows of signing in: server-side web sessions and the failed sign-ins counted against
accounts and addresses.

Apart from ``tables.py`` only to keep that module readable; they are on the same ``Base`` (so the
same metadata, which Alembic compares with the migrations). Their repositories
(``store.web_sessions``, ``store.sign_in_throttles``) import this module, and ``store.db`` imports
those, so whatever opens or migrates a store has these tables in the metadata.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import NAME_LENGTH, Base


class WebSessionRow(Base):
    """A signed-in web session; the cookie holds a secret whose SHA-256 digest is the key."""

    __tablename__ = "web_sessions"

    id_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)


class SignInThrottleRow(Base):
    """Recent sign-in attempts of one account (``kind`` "account", by the name tried) or one
    address (``kind`` "address"; an IPv6 address by its /64), counted before the password is
    checked and forgotten after a success, and an existing account's lockout."""

    __tablename__ = "sign_in_throttles"

    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    failures: Mapped[int]
    last_failure_at: Mapped[datetime] = mapped_column(UtcDateTime)
    locked_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
