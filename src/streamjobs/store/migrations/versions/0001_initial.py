"""The first schema: jobs and their tags, users and access tokens, node types, resource bundles
and the audit log; seeds the bundle "default" and the node types small, medium and large.

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from streamjobs.domain.clock import SystemClock

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)

SEED_NODE_TYPES = [
    {"name": "small", "cores": 1, "memory_mb": 1024},
    {"name": "medium", "cores": 2, "memory_mb": 4096},
    {"name": "large", "cores": 4, "memory_mb": 8192},
]
SEED_BUNDLE = "default"


def upgrade() -> None:
    _create_jobs()
    _create_identity()
    _create_catalog()
    _create_audit_log()
    _seed_catalog()


def _create_jobs() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", NAME, nullable=False),
        sa.Column("namespace", NAME, nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("bundle", NAME, nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("desired_state", sa.String(32), server_default="STOPPED", nullable=False),
        sa.Column("status", sa.String(32), server_default="Idle", nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_by", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_by", NAME, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_jobs"),
        sa.UniqueConstraint("name", name="uq_jobs_name"),
    )
    op.create_index("ix_jobs_bundle", "jobs", ["bundle"])
    op.create_index("ix_jobs_status", "jobs", ["status"])
    op.create_table(
        "job_tags",
        sa.Column("job_id", sa.String(36), nullable=False),
        sa.Column("key", NAME, nullable=False),
        sa.Column("value", NAME, nullable=False),
        sa.PrimaryKeyConstraint("job_id", "key", name="pk_job_tags"),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name="fk_job_tags_job_id_jobs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_job_tags_key_value", "job_tags", ["key", "value"])


def _create_identity() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", NAME, nullable=False),
        sa.Column("password_hash", NAME, nullable=True),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("name", name="uq_users_name"),
    )
    op.create_table(
        "access_tokens",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("name", NAME, nullable=False),
        sa.Column("token_hash", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=True),
        sa.Column("revoked_at", TIMESTAMP, nullable=True),
        sa.Column("last_used_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_access_tokens"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_access_tokens_user_id_users", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("user_id", "name", name="uq_access_tokens_user_id_name"),
        sa.UniqueConstraint("token_hash", name="uq_access_tokens_token_hash"),
    )


def _create_catalog() -> None:
    op.create_table(
        "node_types",
        sa.Column("name", NAME, nullable=False),
        sa.Column("cores", sa.Integer(), nullable=False),
        sa.Column("memory_mb", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_node_types"),
    )
    op.create_table(
        "resource_bundles",
        sa.Column("name", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_resource_bundles"),
    )


def _create_audit_log() -> None:
    op.create_table(
        "audit_log",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("actor", NAME, nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("resource_kind", sa.String(64), nullable=False),
        sa.Column("resource_name", NAME, nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("source", NAME, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )


def _seed_catalog() -> None:
    node_types = sa.table(
        "node_types",
        sa.column("name", sa.String()),
        sa.column("cores", sa.Integer()),
        sa.column("memory_mb", sa.Integer()),
    )
    bundles = sa.table(
        "resource_bundles",
        sa.column("name", sa.String()),
        sa.column("created_at", TIMESTAMP),
    )
    op.bulk_insert(node_types, SEED_NODE_TYPES)
    op.bulk_insert(bundles, [{"name": SEED_BUNDLE, "created_at": SystemClock().now()}])


def downgrade() -> None:
    dependents_first = (
        "audit_log",
        "resource_bundles",
        "node_types",
        "access_tokens",
        "users",
        "job_tags",
        "jobs",
    )
    for table in dependents_first:
        op.drop_table(table)
