"""Warm standby drivers: an attempt started ahead, held ready, promoted when the active one dies.

A standby is recorded as the application's next attempt with ``standby`` set; until it is
``promoted_at`` it is not the application's latest attempt (the supervisor watches it apart),
and its driver's report token is kept with it (``token_hash``): promotion makes it the
application's.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.add_column(
            sa.Column("standby", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        attempts.add_column(sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=True))
        attempts.add_column(sa.Column("token_hash", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.drop_column("token_hash")
        attempts.drop_column("promoted_at")
        attempts.drop_column("standby")
