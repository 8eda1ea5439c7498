"""Applications: the runs of jobs, with their attempts, events, reported progress and executors.

Revision ID: 0003
Revises: 0002
Create Date: 2026-01-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
APPLICATION_NAME = sa.String(255 + 21)
TIMESTAMP = sa.DateTime(timezone=True)
SERIAL_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    _create_applications()
    _create_attempts()
    _create_events()
    _create_progress()
    _create_executors()


def _create_applications() -> None:
    op.create_table(
        "applications",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", APPLICATION_NAME, nullable=False),
        sa.Column("run_number", sa.Integer(), nullable=False),
        sa.Column("job_name", NAME, nullable=False),
        sa.Column("namespace", NAME, nullable=False),
        sa.Column("bundle", NAME, nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("live_key", NAME, nullable=True),
        sa.Column("triggered_by", NAME, nullable=False),
        sa.Column("run_as", NAME, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("transition_time", TIMESTAMP, nullable=False),
        sa.Column("last_update_time", TIMESTAMP, nullable=False),
        *[
            sa.Column(counter, sa.Integer(), server_default="0", nullable=False)
            for counter in (
                "submission_attempts",
                "execution_attempts",
                "restarts",
                "submission_failures",
                "execution_failures",
            )
        ],
        sa.Column("driver_state", sa.String(32), nullable=True),
        sa.Column("executors_running", sa.Integer(), server_default="0", nullable=False),
        sa.Column("executors_pending", sa.Integer(), server_default="0", nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("requested", sa.String(16), nullable=True),
        sa.Column("requested_at", TIMESTAMP, nullable=True),
        sa.Column("requested_by", NAME, nullable=True),
        sa.Column("next_attempt_at", TIMESTAMP, nullable=True),
        sa.Column("running_since", TIMESTAMP, nullable=True),
        sa.Column("last_heartbeat_at", TIMESTAMP, nullable=True),
        sa.Column("spark_app_id", NAME, nullable=True),
        sa.Column("token_hash", NAME, nullable=True),
        sa.Column("latest", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_applications"),
        sa.UniqueConstraint("job_name", "run_number", name="uq_applications_job_name_run_number"),
        sa.UniqueConstraint("live_key", name="uq_applications_live_key"),
        sa.UniqueConstraint("token_hash", name="uq_applications_token_hash"),
    )
    op.create_index(
        "ix_applications_job_name_created_at", "applications", ["job_name", "created_at"]
    )
    op.create_index("ix_applications_state", "applications", ["state"])


def _application_reference(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["application_id"],
        ["applications.id"],
        name=f"fk_{table}_application_id_applications",
        ondelete="CASCADE",
    )


def _create_attempts() -> None:
    op.create_table(
        "application_attempts",
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("process_started_at", sa.Double(), nullable=True),
        sa.Column("directory", sa.Text(), nullable=False),
        sa.Column("ui_port", sa.Integer(), nullable=True),
        sa.Column("master", NAME, nullable=True),
        sa.Column("submitted_at", TIMESTAMP, nullable=False),
        sa.Column("running_at", TIMESTAMP, nullable=True),
        sa.Column("ended_at", TIMESTAMP, nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("outcome", sa.String(32), nullable=True),
        sa.PrimaryKeyConstraint("application_id", "number", name="pk_application_attempts"),
        _application_reference("application_attempts"),
    )


def _create_events() -> None:
    op.create_table(
        "application_events",
        sa.Column("id", SERIAL_ID, autoincrement=True, nullable=False),
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_application_events"),
        _application_reference("application_events"),
    )
    op.create_index(
        "ix_application_events_application_id_id", "application_events", ["application_id", "id"]
    )


def _create_progress() -> None:
    op.create_table(
        "application_progress",
        sa.Column("id", SERIAL_ID, autoincrement=True, nullable=False),
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("query_id", NAME, nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_application_progress"),
        _application_reference("application_progress"),
        sa.UniqueConstraint(
            "application_id",
            "attempt",
            "sequence",
            name="uq_application_progress_application_id_attempt_sequence",
        ),
    )
    op.create_index(
        "ix_application_progress_application_id_id",
        "application_progress",
        ["application_id", "id"],
    )


def _create_executors() -> None:
    op.create_table(
        "application_executors",
        sa.Column("application_id", sa.String(36), nullable=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("application_id", name="pk_application_executors"),
        _application_reference("application_executors"),
    )


def downgrade() -> None:
    dependents_first = (
        "application_executors",
        "application_progress",
        "application_events",
        "application_attempts",
        "applications",
    )
    for table in dependents_first:
        op.drop_table(table)
