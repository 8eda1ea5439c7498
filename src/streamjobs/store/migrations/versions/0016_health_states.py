"""Where each health rule of each application stands between the supervisor's judgements
(``domain.health.RuleState``), so a restarted server neither fires a firing rule again nor
forgets how long a condition has held.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "health_rule_states",
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("rule", sa.String(255), nullable=False),
        sa.Column("holding_since", TIMESTAMP, nullable=True),
        sa.Column("firing_since", TIMESTAMP, nullable=True),
        sa.Column("last_value", sa.Double(), nullable=True),
        sa.Column("judged_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_health_rule_states_application_id_applications",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("application_id", "rule", name="pk_health_rule_states"),
    )


def downgrade() -> None:
    op.drop_table("health_rule_states")
