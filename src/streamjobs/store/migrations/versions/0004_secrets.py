"""Secrets: named values per resource bundle, kept only as ciphertext.

Revision ID: 0004
Revises: 0003
Create Date: 2026-01-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "secrets",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("bundle", NAME, nullable=False),
        sa.Column("name", NAME, nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_by", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_by", NAME, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_secrets"),
        sa.ForeignKeyConstraint(
            ["bundle"],
            ["resource_bundles.name"],
            name="fk_secrets_bundle_resource_bundles",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("bundle", "name", name="uq_secrets_bundle_name"),
    )


def downgrade() -> None:
    op.drop_table("secrets")
