"""A job as clients see it, the same document for the REST API and the web UI: kept apart from
the job use cases (``services.jobs``) because it only formats what they return."""

from __future__ import annotations

from typing import Any

from streamjobs.domain.states import LIVE_STATES
from streamjobs.domain.upgrades import changed_since_running
from streamjobs.services.resources import iso_time, with_server_metadata
from streamjobs.store import ApplicationRecord, LatestRun
from streamjobs.store.jobs import JobRecord


def job_document(
    record: JobRecord, latest: LatestRun | ApplicationRecord | None = None
) -> dict[str, Any]:
    """The job as clients see it: its manifest, the metadata the server owns, and its status:
    the state of its latest application (``Idle`` before its first run), that one's figures, and
    whether the job was configured since it started (``changedSinceRunning``: it is live and
    runs an older version of the job, which an upgrade moves it off)."""
    document = with_server_metadata(record)
    document["status"] = {"phase": record.status, "desiredState": record.desired_state}
    if latest is not None:
        figures = latest.latest or {}
        document["status"]["application"] = {
            "id": latest.id,
            "name": latest.name,
            "state": str(latest.state),
            "startedAt": iso_time(latest.created_at),
            "startedBy": latest.triggered_by,
            "inputRowsPerSecond": figures.get("inputRowsPerSecond"),
            "processedRowsPerSecond": figures.get("processedRowsPerSecond"),
            "batchId": figures.get("batchId"),
            "jobVersion": latest.job_version,
        }
        document["status"]["changedSinceRunning"] = latest.state in LIVE_STATES and (
            changed_since_running(record.version, latest.job_version)
        )
    return document
