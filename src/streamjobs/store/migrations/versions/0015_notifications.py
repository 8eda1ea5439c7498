"""Notifications: the destinations they go to (email, webhook, Slack) and the outbox of each
notice to send, with its delivery's outcome.

The outbox is written in the transaction of the event that causes a notice and read by the
delivery worker: the index on (state, next_attempt_at) serves its "what is due" query, the one on
(destination, id) a destination's page of recent deliveries. An outbox row names its destination
without a foreign key, so an event's transaction never fails on a destination deleted meanwhile;
the destination service deletes a destination's rows with it.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)
SERIAL_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "notification_destinations",
        sa.Column("name", NAME, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("bundle", NAME, nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret_names", sa.JSON(), nullable=False),
        sa.Column("healthy", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_by", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_by", NAME, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_notification_destinations"),
    )
    op.create_index("ix_notification_destinations_bundle", "notification_destinations", ["bundle"])
    op.create_table(
        "notification_outbox",
        sa.Column("id", SERIAL_ID, autoincrement=True, nullable=False),
        sa.Column("destination", NAME, nullable=False),
        sa.Column("job_name", NAME, nullable=True),
        sa.Column("application_id", sa.String(36), nullable=True),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("notice", sa.JSON(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", TIMESTAMP, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", TIMESTAMP, nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_notification_outbox"),
    )
    op.create_index(
        "ix_notification_outbox_state_next_attempt_at",
        "notification_outbox",
        ["state", "next_attempt_at"],
    )
    op.create_index(
        "ix_notification_outbox_destination_id", "notification_outbox", ["destination", "id"]
    )


def downgrade() -> None:
    op.drop_table("notification_outbox")
    op.drop_table("notification_destinations")
