"""The row of the supervisor's lease: which server runs the supervisor, until when, and the
fencing token its writes carry (``store.leases``).

Apart from ``tables.py`` to keep that module readable; on the same ``Base``, so Alembic compares
it with the migrations. Its repository imports this module, and ``store.db`` imports that.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import NAME_LENGTH, Base


class SupervisorLeaseRow(Base):
    """One lease (``supervisor``). ``expires_at`` is on the database's clock; ``token`` goes up
    by one at every change of holder, never down."""

    __tablename__ = "supervisor_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    holder_url: Mapped[str | None] = mapped_column(Text)
    token: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    acquired_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
