"""The rows of upgrades: a running application moved to its job's current spec, watched, and
perhaps rolled back (``domain.upgrades``).

Apart from ``tables.py`` only to keep that module readable; they are on the same ``Base`` (so the
same metadata, which Alembic compares with the migrations). Their repository
(``store.upgrades``) imports this module, and ``store.db`` imports that, so whatever opens or
migrates a store has this table in the metadata.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.snapshot_tables import SNAPSHOT_NAME_LENGTH
from streamjobs.store.tables import NAME_LENGTH, Base


class UpgradeRow(Base):
    """One upgrade of a job, from the application it stopped to the one it started (and the
    one its rollback started, if it rolled back).

    ``job_name`` has no foreign key (a job's key is its id); deleting a job deletes its upgrades
    (``services.job_deletion``). ``active_key`` holds the job name while the upgrade is in
    progress and NULL after, so the database itself keeps a job to one upgrade at a time.
    """

    __tablename__ = "upgrades"
    __table_args__ = (
        UniqueConstraint("active_key"),
        Index("ix_upgrades_job_name_requested_at", "job_name", "requested_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    job_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    mode: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), index=True)
    active_key: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    from_application_id: Mapped[str | None] = mapped_column(
        ForeignKey("applications.id", ondelete="SET NULL")
    )
    to_application_id: Mapped[str | None] = mapped_column(
        ForeignKey("applications.id", ondelete="SET NULL")
    )
    rollback_application_id: Mapped[str | None] = mapped_column(
        ForeignKey("applications.id", ondelete="SET NULL")
    )
    from_job_version: Mapped[int] = mapped_column(Integer)
    to_job_version: Mapped[int] = mapped_column(Integer)
    rollback_job_version: Mapped[int | None] = mapped_column(Integer)
    from_spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    to_spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    snapshot_name: Mapped[str | None] = mapped_column(String(SNAPSHOT_NAME_LENGTH))
    requested_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    requested_at: Mapped[datetime] = mapped_column(UtcDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    watch_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    reason: Mapped[str | None] = mapped_column(Text)
