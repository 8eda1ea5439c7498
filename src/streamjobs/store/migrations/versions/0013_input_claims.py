"""Jobs claim the locations they read too, so that no checkpoint is written at, inside or around
another job's input, nor deleted with it (``domain.location_claims``).

Existing jobs get their input claims here, from their stored manifests and connections, read
leniently as revision 0009 reads them: a manifest that no longer parses is skipped, and a
location a job already claims (one it also writes) keeps its claim.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
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
    rows = _input_claims(op.get_bind())
    if rows:
        op.bulk_insert(_CLAIMS, rows)


def downgrade() -> None:
    op.execute(_CLAIMS.delete().where(_CLAIMS.c.kind == "input"))


def _input_claims(connection: sa.Connection) -> list[dict[str, Any]]:
    # Imported here: only this upgrade needs the manifest rules, and only for existing jobs.
    from streamjobs.domain.connections import Connection
    from streamjobs.domain.job_locations import job_locations
    from streamjobs.domain.location_claims import ClaimKind, job_claims
    from streamjobs.domain.manifest import StreamingJob

    connections = {}
    for (manifest,) in connection.execute(sa.text("SELECT manifest FROM connections")):
        try:
            parsed = Connection.model_validate(_as_json(manifest))
        except ValueError:
            continue
        connections[parsed.name] = parsed
    claimed = {
        (job_id, location)
        for job_id, location in connection.execute(
            sa.text("SELECT job_id, location FROM job_claims")
        )
    }
    rows = []
    for job_id, manifest in connection.execute(sa.text("SELECT id, manifest FROM jobs")):
        try:
            job = StreamingJob.model_validate(_as_json(manifest))
            claims = job_claims(job, job_locations(job, connections, checkpoint_root=None))
        except ValueError:
            continue
        rows += [
            {"job_id": job_id, **claim._asdict(), "kind": str(claim.kind)}
            for claim in claims
            if claim.kind is ClaimKind.INPUT and (job_id, claim.location) not in claimed
        ]
    return rows


def _as_json(value: Any) -> Any:
    """A JSON column as read by a plain SQL text query: already decoded, or still text."""
    if isinstance(value, str | bytes):
        return json.loads(value)
    return value
