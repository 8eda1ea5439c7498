"""Drivers on other hosts and a supervisor chosen among several servers.

An attempt records where its driver can be reached (``driver_host``: the address of its UI and
REST API), the server host that started it (``launched_on``: a client-mode or local driver can
only be watched from there), and, in cluster deploy mode, the standalone master's
``submission_id`` by which it is followed and killed.

``supervisor_leases`` holds one row per lease (``supervisor``): who holds it, until when (the
database's own clock, so servers' clocks need not agree) and its fencing ``token``, raised by
one at every change of holder. Every write the supervisor makes checks the token in its own
transaction.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.add_column(sa.Column("submission_id", NAME, nullable=True))
        attempts.add_column(sa.Column("driver_host", NAME, nullable=True))
        attempts.add_column(sa.Column("launched_on", NAME, nullable=True))
    op.create_table(
        "supervisor_leases",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("holder", NAME, nullable=True),
        sa.Column("holder_url", sa.Text(), nullable=True),
        sa.Column("token", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("acquired_at", TIMESTAMP, nullable=True),
        sa.Column("expires_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_supervisor_leases"),
    )


def downgrade() -> None:
    op.drop_table("supervisor_leases")
    with op.batch_alter_table("application_attempts") as attempts:
        attempts.drop_column("launched_on")
        attempts.drop_column("driver_host")
        attempts.drop_column("submission_id")
