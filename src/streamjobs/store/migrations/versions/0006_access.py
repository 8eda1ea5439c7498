"""Access control: user kinds (service accounts), groups and their members, domain grants,
bundle grants, service account grants, bundle quotas, and what each application takes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("users") as users:
        users.add_column(sa.Column("kind", sa.String(32), server_default="user", nullable=False))
    with op.batch_alter_table("resource_bundles") as bundles:
        bundles.add_column(sa.Column("description", sa.Text(), nullable=True))
        bundles.add_column(sa.Column("max_running_applications", sa.Integer(), nullable=True))
        bundles.add_column(sa.Column("max_cores", sa.Integer(), nullable=True))
        bundles.add_column(sa.Column("max_memory_mb", sa.Integer(), nullable=True))
    with op.batch_alter_table("applications") as applications:
        applications.add_column(
            sa.Column("cores", sa.Integer(), server_default="0", nullable=False)
        )
        applications.add_column(
            sa.Column("memory_mb", sa.Integer(), server_default="0", nullable=False)
        )
    op.create_table(
        "groups",
        sa.Column("name", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_groups"),
    )
    op.create_table(
        "group_members",
        sa.Column("group_name", NAME, nullable=False),
        sa.Column("user_name", NAME, nullable=False),
        sa.PrimaryKeyConstraint("group_name", "user_name", name="pk_group_members"),
        sa.ForeignKeyConstraint(
            ["group_name"],
            ["groups.name"],
            name="fk_group_members_group_name_groups",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_name"],
            ["users.name"],
            name="fk_group_members_user_name_users",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_group_members_user_name", "group_members", ["user_name"])
    op.create_table(
        "domain_grants",
        sa.Column("subject_kind", sa.String(16), nullable=False),
        sa.Column("subject_name", NAME, nullable=False),
        sa.Column("permission", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint(
            "subject_kind", "subject_name", "permission", name="pk_domain_grants"
        ),
    )
    op.create_table(
        "bundle_grants",
        sa.Column("bundle", NAME, nullable=False),
        sa.Column("subject_kind", sa.String(16), nullable=False),
        sa.Column("subject_name", NAME, nullable=False),
        sa.Column("permission", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint(
            "bundle", "subject_kind", "subject_name", "permission", name="pk_bundle_grants"
        ),
        sa.ForeignKeyConstraint(
            ["bundle"],
            ["resource_bundles.name"],
            name="fk_bundle_grants_bundle_resource_bundles",
            ondelete="CASCADE",
        ),
    )
    op.create_table(
        "service_account_grants",
        sa.Column("service_account", NAME, nullable=False),
        sa.Column("subject_kind", sa.String(16), nullable=False),
        sa.Column("subject_name", NAME, nullable=False),
        sa.PrimaryKeyConstraint(
            "service_account", "subject_kind", "subject_name", name="pk_service_account_grants"
        ),
        sa.ForeignKeyConstraint(
            ["service_account"],
            ["users.name"],
            name="fk_service_account_grants_service_account_users",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("service_account_grants")
    op.drop_table("bundle_grants")
    op.drop_table("domain_grants")
    op.drop_index("ix_group_members_user_name", table_name="group_members")
    op.drop_table("group_members")
    op.drop_table("groups")
    # Natively, not by rebuilding the tables: on SQLite a rebuild drops the old table, and the
    # ON DELETE CASCADE of the foreign keys on it would take the rows that refer to it along.
    for table, columns in (
        ("applications", ("memory_mb", "cores")),
        (
            "resource_bundles",
            ("max_memory_mb", "max_cores", "max_running_applications", "description"),
        ),
        ("users", ("kind",)),
    ):
        for column in columns:
            op.drop_column(table, column)
