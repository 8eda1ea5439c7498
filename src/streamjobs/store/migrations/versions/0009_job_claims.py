"""Jobs claim the locations they write (outputs and checkpoint), so a new or changed job is
checked against the claims of the others without reading every manifest.

Existing jobs get their claims here, from their stored manifests and connections, read
leniently: a manifest that no longer parses is skipped (it is refused when next changed), and
two existing jobs that already share a location keep both claims.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CLAIMS = sa.table(
    "job_claims",
    sa.column("job_id", sa.String),
    sa.column("location", sa.Text),
    sa.column("derived", sa.Boolean),
    sa.column("kind", sa.String),
    sa.column("field", sa.String),
)


def upgrade() -> None:
    op.create_table(
        "job_claims",
        sa.Column("job_id", sa.String(36), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("derived", sa.Boolean(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("field", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name="fk_job_claims_job_id_jobs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("job_id", "location", name="pk_job_claims"),
    )
    op.create_index("ix_job_claims_location", "job_claims", ["location"])
    rows = _existing_claims(op.get_bind())
    if rows:
        op.bulk_insert(_CLAIMS, rows)


def downgrade() -> None:
    op.drop_table("job_claims")


def _existing_claims(connection: sa.Connection) -> list[dict[str, Any]]:
    # Imported here: only this upgrade needs the manifest rules, and only for existing jobs.
    from streamjobs.domain.connections import Connection
    from streamjobs.domain.job_locations import job_locations
    from streamjobs.domain.location_claims import job_claims
    from streamjobs.domain.manifest import StreamingJob

    connections = {}
    for (manifest,) in connection.execute(sa.text("SELECT manifest FROM connections")):
        try:
            parsed = Connection.model_validate(_as_json(manifest))
        except ValueError:
            continue
        connections[parsed.name] = parsed
    rows = []
    for job_id, manifest in connection.execute(sa.text("SELECT id, manifest FROM jobs")):
        try:
            job = StreamingJob.model_validate(_as_json(manifest))
            claims = job_claims(job, job_locations(job, connections, checkpoint_root=None))
        except ValueError:
            continue
        rows += [{"job_id": job_id, **claim._asdict(), "kind": str(claim.kind)} for claim in claims]
    return rows


def _as_json(value: Any) -> Any:
    """A JSON column as read by a plain SQL text query: already decoded, or still text."""
    if isinstance(value, str | bytes):
        return json.loads(value)
    return value
