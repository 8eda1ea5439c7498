"""A python or jvm job no longer carries ``processing.guarantee``: its program manages its own
delivery guarantee, and a manifest that sets one is refused (``domain.deployment_rules``).

Servers before this revision filled ``AT_LEAST_ONCE`` into every stored manifest, programs
included, so a program stored then would be refused at Run for a value its user never wrote.
Here that value is cleared (it never did anything) and the job's version goes up, since its
stored manifest changed. Nothing else of a manifest is touched; a row that is not a readable
manifest is left as it is. Undone, nothing is put back: the old default needs no value.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PROGRAM_TYPES = frozenset({"python", "jvm"})

_JOBS = sa.table(
    "jobs",
    sa.column("id", sa.String),
    sa.column("manifest", sa.JSON),
    sa.column("version", sa.Integer),
)


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, manifest, version FROM jobs")).all()
    for job_id, stored, version in rows:
        manifest = _as_json(stored)
        if not _program_with_guarantee(manifest):
            continue
        manifest["spec"]["processing"]["guarantee"] = None
        connection.execute(
            _JOBS.update()
            .where(_JOBS.c.id == job_id)
            .values(manifest=manifest, version=version + 1)
        )


def downgrade() -> None:
    """Nothing to put back: before this revision a missing guarantee read as the default."""


def _program_with_guarantee(manifest: Any) -> bool:
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    if not isinstance(spec, dict):
        return False
    application = spec.get("application")
    processing = spec.get("processing")
    return (
        isinstance(application, dict)
        and application.get("type") in PROGRAM_TYPES
        and isinstance(processing, dict)
        and processing.get("guarantee") is not None
    )


def _as_json(value: Any) -> Any:
    """A JSON column as read by a plain SQL text query: already decoded, or still text."""
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value
