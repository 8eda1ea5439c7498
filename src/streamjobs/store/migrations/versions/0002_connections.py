"""Connections: named data systems (Kafka, lakehouse, files, JDBC) that job datasets refer to.

Revision ID: 0002
Revises: 0001
Create Date: 2026-01-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "connections",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", NAME, nullable=False),
        sa.Column("namespace", NAME, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_by", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_by", NAME, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_connections"),
        sa.UniqueConstraint("name", name="uq_connections_name"),
    )
    op.create_index("ix_connections_type", "connections", ["type"])


def downgrade() -> None:
    op.drop_table("connections")
