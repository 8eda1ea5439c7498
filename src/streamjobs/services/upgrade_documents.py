"""An upgrade as clients see it, the same document for the REST API and the web UI: kept apart
from the upgrade use cases (``services.upgrades``) because it only formats what they return."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from streamjobs.domain.upgrades import spec_diff
from streamjobs.services.resources import iso_time
from streamjobs.store.upgrades import UpgradeRecord


def upgrade_document(record: UpgradeRecord) -> dict[str, Any]:
    """The upgrade: its mode and status, both job versions and applications (and the rollback's),
    its times, why it ended so, and the unified diff of the two specs as YAML."""
    return {
        "id": record.id,
        "job": record.job_name,
        "mode": str(record.mode),
        "status": str(record.status),
        "fromVersion": record.from_job_version,
        "toVersion": record.to_job_version,
        "rollbackVersion": record.rollback_job_version,
        "fromApplication": record.from_application_id,
        "toApplication": record.to_application_id,
        "rollbackApplication": record.rollback_application_id,
        "snapshot": record.snapshot_name,
        "requestedBy": record.requested_by,
        "requestedAt": iso_time(record.requested_at),
        "startedAt": _time(record.started_at),
        "watchUntil": _time(record.watch_until),
        "finishedAt": _time(record.finished_at),
        "reason": record.reason,
        "diff": upgrade_diff(record),
    }


def upgrade_diff(record: UpgradeRecord) -> str:
    """What the upgrade changed: the unified diff of the old application's spec and the new
    one, as YAML (empty when they are the same)."""
    return spec_diff(
        record.from_spec,
        record.to_spec,
        from_label=f"job version {record.from_job_version}",
        to_label=f"job version {record.to_job_version}",
    )


def _time(moment: datetime | None) -> str | None:
    return iso_time(moment) if moment else None
