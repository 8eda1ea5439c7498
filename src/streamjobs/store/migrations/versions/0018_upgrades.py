"""Upgrades of running applications to their job's current spec, with their rollbacks.

An upgrade row names its job (no foreign key: a job's key is its id, and a job's deletion
deletes its upgrades itself) and the applications it stopped and started (SET NULL when one
goes). ``active_key`` is the job's name while the upgrade is in progress, NULL after: unique,
so a job has one upgrade in progress at most.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)
APPLICATION_COLUMNS = ("from_application_id", "to_application_id", "rollback_application_id")


def upgrade() -> None:
    op.create_table(
        "upgrades",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("job_name", NAME, nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("active_key", NAME, nullable=True),
        *(sa.Column(column, sa.String(36), nullable=True) for column in APPLICATION_COLUMNS),
        sa.Column("from_job_version", sa.Integer(), nullable=False),
        sa.Column("to_job_version", sa.Integer(), nullable=False),
        sa.Column("rollback_job_version", sa.Integer(), nullable=True),
        sa.Column("from_spec", sa.JSON(), nullable=False),
        sa.Column("to_spec", sa.JSON(), nullable=False),
        sa.Column("snapshot_name", sa.String(128), nullable=True),
        sa.Column("requested_by", NAME, nullable=False),
        sa.Column("requested_at", TIMESTAMP, nullable=False),
        sa.Column("started_at", TIMESTAMP, nullable=True),
        sa.Column("watch_until", TIMESTAMP, nullable=True),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        *(
            sa.ForeignKeyConstraint(
                [column],
                ["applications.id"],
                name=f"fk_upgrades_{column}_applications",
                ondelete="SET NULL",
            )
            for column in APPLICATION_COLUMNS
        ),
        sa.PrimaryKeyConstraint("id", name="pk_upgrades"),
        sa.UniqueConstraint("active_key", name="uq_upgrades_active_key"),
    )
    op.create_index("ix_upgrades_status", "upgrades", ["status"])
    op.create_index("ix_upgrades_job_name_requested_at", "upgrades", ["job_name", "requested_at"])


def downgrade() -> None:
    op.drop_table("upgrades")
