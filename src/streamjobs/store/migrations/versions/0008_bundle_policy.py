"""Resource bundles own data roots and a Spark setting policy: where their jobs' paths, datasets
and checkpoints may live, and which restricted Spark settings their jobs may (or may not) set.

``data_roots`` stays NULL until someone sets it, so the server can tell a bundle never given
roots (the ``default`` bundle gets its roots from the settings on first start) from one whose
roots were emptied on purpose.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_POLICY_COLUMNS = ("data_roots", "spark_conf_allowed", "spark_conf_refused")


def upgrade() -> None:
    # Plain-string defaults, not SQL expressions: with an expression Alembic rebuilds the table
    # on SQLite, and dropping the old one would cascade to every grant and secret.
    with op.batch_alter_table("resource_bundles") as bundles:
        bundles.add_column(sa.Column("data_roots", sa.JSON(), nullable=True))
        for column in _POLICY_COLUMNS[1:]:
            bundles.add_column(sa.Column(column, sa.JSON(), server_default="[]", nullable=False))


def downgrade() -> None:
    # Natively, not by rebuilding the table: on SQLite a rebuild drops the old table, and its
    # foreign keys' ON DELETE CASCADE would take every grant and secret of the bundles with it.
    for column in reversed(_POLICY_COLUMNS):
        op.drop_column("resource_bundles", column)
