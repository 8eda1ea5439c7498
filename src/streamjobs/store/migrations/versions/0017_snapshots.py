"""Snapshots of jobs' checkpoints, and the job version each application's spec came from.

A snapshot row names its job (no foreign key: a job's key is its id, and a job's deletion
deletes its snapshots itself) and the application it was taken from (SET NULL when that
application goes). An application's ``job_version`` tells whether the job was configured since
the application started ("changed since running"); NULL for applications stored before.

``processing.snapshotIntervalMillis`` now takes periodic snapshots; before, it was accepted and
never read, and servers filled its old default (10000) into every stored manifest and template.
That filled value is cleared from jobs (their version goes up, as their manifest changed) and
from live applications' templates, so no stored job starts snapshotting every ten seconds for a
value its user most likely never wrote. Any other value is kept: it was written on purpose.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = sa.String(255)
TIMESTAMP = sa.DateTime(timezone=True)
OLD_FILLED_INTERVAL = 10000
LIVE_STATES = ("STARTING", "RUNNING", "PENDING_RERUN", "TERMINATING", "SUSPENDED")

_JOBS = sa.table(
    "jobs", sa.column("id", sa.String), sa.column("manifest", sa.JSON), sa.column("version")
)
_APPLICATIONS = sa.table(
    "applications", sa.column("id", sa.String), sa.column("spec", sa.JSON), sa.column("state")
)


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("job_name", NAME, nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("application_id", sa.String(36), nullable=True),
        sa.Column("spec_version", sa.Integer(), nullable=True),
        sa.Column("batches", sa.JSON(), nullable=False),
        sa.Column("positions", sa.JSON(), nullable=False),
        sa.Column("requested_at", TIMESTAMP, nullable=False),
        sa.Column("taken_at", TIMESTAMP, nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("requested_by", NAME, nullable=True),
        sa.Column("directory", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name="fk_snapshots_application_id_applications",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_snapshots"),
        sa.UniqueConstraint("job_name", "name", name="uq_snapshots_job_name_name"),
    )
    op.create_index("ix_snapshots_status", "snapshots", ["status"])
    op.create_index("ix_snapshots_application_id", "snapshots", ["application_id"])
    with op.batch_alter_table("applications") as applications:
        applications.add_column(sa.Column("job_version", sa.Integer(), nullable=True))
    _clear_filled_intervals()


def _clear_filled_intervals() -> None:
    connection = op.get_bind()
    jobs = connection.execute(sa.text("SELECT id, manifest, version FROM jobs")).all()
    for job_id, stored, version in jobs:
        manifest = _as_json(stored)
        if _cleared(manifest):
            connection.execute(
                _JOBS.update()
                .where(_JOBS.c.id == job_id)
                .values(manifest=manifest, version=version + 1)
            )
    live = connection.execute(
        sa.select(_APPLICATIONS.c.id, _APPLICATIONS.c.spec).where(
            _APPLICATIONS.c.state.in_(LIVE_STATES)
        )
    ).all()
    for application_id, stored in live:
        spec = _as_json(stored)
        if _cleared(spec):
            connection.execute(
                _APPLICATIONS.update().where(_APPLICATIONS.c.id == application_id).values(spec=spec)
            )


def _cleared(manifest: Any) -> bool:
    """Drop the filled interval from ``manifest`` in place; whether there was one."""
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    processing = spec.get("processing") if isinstance(spec, dict) else None
    if not isinstance(processing, dict):
        return False
    if processing.get("snapshotIntervalMillis") != OLD_FILLED_INTERVAL:
        return False
    del processing["snapshotIntervalMillis"]
    return True


def _as_json(value: Any) -> Any:
    """A JSON column as read by a plain SQL query: already decoded, or still text."""
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def downgrade() -> None:
    with op.batch_alter_table("applications") as applications:
        applications.drop_column("job_version")
    op.drop_table("snapshots")
