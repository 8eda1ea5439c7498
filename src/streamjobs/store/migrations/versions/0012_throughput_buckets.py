"""An application's throughput over its whole life, down-sampled (``store.throughput``): the
buckets, and where folding its progress reports into them stands.

Nothing is carried over: an application that reported before this revision has buckets only from
its first report after it, and its chart shows the reports kept from before.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)
FIGURES = ("input", "processed", "duration")


def upgrade() -> None:
    op.create_table(
        "application_throughput_tallies",
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.Column("width_seconds", sa.Integer(), nullable=False),
        sa.Column("buckets", sa.Integer(), nullable=False),
        sa.Column("queries", sa.JSON(), nullable=False),
        _application_reference("application_throughput_tallies"),
        sa.PrimaryKeyConstraint("application_id", name="pk_application_throughput_tallies"),
    )
    figure_columns = [
        column
        for name in FIGURES
        for column in (
            sa.Column(f"{name}_total", sa.Double(), nullable=False),
            sa.Column(f"{name}_count", sa.Integer(), nullable=False),
            sa.Column(f"{name}_highest", sa.Double(), nullable=True),
        )
    ]
    op.create_table(
        "application_throughput_buckets",
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("start", TIMESTAMP, nullable=False),
        sa.Column("width_seconds", sa.Integer(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("first_at", TIMESTAMP, nullable=False),
        sa.Column("last_at", TIMESTAMP, nullable=False),
        *figure_columns,
        _application_reference("application_throughput_buckets"),
        sa.PrimaryKeyConstraint(
            "application_id", "start", name="pk_application_throughput_buckets"
        ),
    )


def _application_reference(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["application_id"],
        ["applications.id"],
        name=f"fk_{table}_application_id_applications",
        ondelete="CASCADE",
    )


def downgrade() -> None:
    op.drop_table("application_throughput_buckets")
    op.drop_table("application_throughput_tallies")
