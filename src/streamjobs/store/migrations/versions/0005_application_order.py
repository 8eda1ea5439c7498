"""Applications: an index in the order lists show them (newest first), so listing every job's
applications reads one page of an index instead of sorting them all.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_applications_created_at_run_number_id",
        "applications",
        ["created_at", "run_number", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_applications_created_at_run_number_id", table_name="applications")
