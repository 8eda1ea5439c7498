"""Attempts carry a fencing value: the supervisor records an attempt, with its fence, before it
starts the attempt's driver, and the driver's wrapper writes the same value beside its exit code.
A server that stopped in between finds the driver again by that value (or knows it never ran).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.add_column(sa.Column("fence", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.drop_column("fence")
