"""The rows of notifications: destinations (where notices go) and the outbox (each notice to
send, and how its delivery went).

Apart from ``tables.py`` only to keep that module readable; they are on the same ``Base`` (so the
same metadata, which Alembic compares with the migrations). Their repositories
(``store.destinations``, ``store.notifications``) import this module, and ``store.db`` imports
those, so whatever opens or migrates a store has these tables in the metadata.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text, true
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import AUDIT_ID, NAME_LENGTH, Base


class NotificationDestinationRow(Base):
    """A named place notices go to: its validated manifest, its settings without secret values
    (``config``), the secret names those settings use, and whether deliveries to it succeed."""

    __tablename__ = "notification_destinations"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    bundle: Mapped[str] = mapped_column(String(NAME_LENGTH), index=True)
    description: Mapped[str | None] = mapped_column(Text)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    secret_names: Mapped[list[str]] = mapped_column(JSON)
    healthy: Mapped[bool] = mapped_column(default=True, server_default=true())
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class NotificationOutboxRow(Base):
    """One notice for one destination: pending until delivered, or failed for good."""

    __tablename__ = "notification_outbox"
    __table_args__ = (
        Index("ix_notification_outbox_state_next_attempt_at", "state", "next_attempt_at"),
        Index("ix_notification_outbox_destination_id", "destination", "id"),
    )

    id: Mapped[int] = mapped_column(AUDIT_ID, primary_key=True, autoincrement=True)
    destination: Mapped[str] = mapped_column(String(NAME_LENGTH))
    job_name: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    application_id: Mapped[str | None] = mapped_column(String(36))
    event: Mapped[str] = mapped_column(String(32))
    notice: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    response_status: Mapped[int | None] = mapped_column(Integer)
