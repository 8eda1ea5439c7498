"""Resource bundles carry a version, so two people changing one bundle's quotas or grants at
once cannot overwrite each other unseen.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("resource_bundles") as bundles:
        bundles.add_column(sa.Column("version", sa.Integer(), server_default="1", nullable=False))


def downgrade() -> None:
    # Natively, not by rebuilding the table: on SQLite a rebuild drops the old table, and its
    # foreign keys' ON DELETE CASCADE would take every grant and secret of the bundles with it.
    op.drop_column("resource_bundles", "version")
