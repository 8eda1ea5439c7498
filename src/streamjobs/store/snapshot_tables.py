"""The rows of snapshots: named copies of a job's checkpoint the server keeps under its snapshot
root (``domain.snapshots``).

Apart from ``tables.py`` only to keep that module readable; they are on the same ``Base`` (so the
same metadata, which Alembic compares with the migrations). Their repository
(``store.snapshots``) imports this module, and ``store.db`` imports that, so whatever opens or
migrates a store has this table in the metadata.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import NAME_LENGTH, Base

SNAPSHOT_NAME_LENGTH = 128
"""The longest snapshot name (``domain.formats.SnapshotName``)."""


class SnapshotRow(Base):
    """One snapshot of a job: asked for (TAKING), kept (READY) or not taken (FAILED).

    ``job_name`` has no foreign key (a job's key is its id); deleting a job deletes its snapshots
    (``services.job_deletion``). ``directory`` is relative to the snapshot root, so the root can
    move with the server's home.
    """

    __tablename__ = "snapshots"
    __table_args__ = (UniqueConstraint("job_name", "name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    job_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    name: Mapped[str] = mapped_column(String(SNAPSHOT_NAME_LENGTH))
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), index=True)
    application_id: Mapped[str | None] = mapped_column(
        ForeignKey("applications.id", ondelete="SET NULL"), index=True
    )
    spec_version: Mapped[int | None] = mapped_column(Integer)
    batches: Mapped[dict[str, int]] = mapped_column(JSON)
    positions: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    requested_at: Mapped[datetime] = mapped_column(UtcDateTime)
    taken_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(Text)
    requested_by: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    directory: Mapped[str | None] = mapped_column(Text)
