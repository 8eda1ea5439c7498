"""How applications look over HTTP: camelCase documents built from the store's records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from streamjobs.services.applications import ApplicationDetails
from streamjobs.services.resources import iso_time
from streamjobs.store import (
    ApplicationEventRecord,
    ApplicationRecord,
    AttemptRecord,
)


def application_document(record: ApplicationRecord) -> dict[str, Any]:
    """An application: what it runs, its state, counters, driver and executors, latest figures."""
    return {
        "id": record.id,
        "name": record.name,
        "job": record.job_name,
        "namespace": record.namespace,
        "bundle": record.bundle,
        "tags": record.tags,
        "state": str(record.state),
        "triggeredBy": record.triggered_by,
        "runAs": record.run_as,
        "createdAt": _time(record.created_at),
        "transitionTime": _time(record.transition_time),
        "lastUpdateTime": _time(record.last_update_time),
        "submissionAttempts": record.submission_attempts,
        "executionAttempts": record.execution_attempts,
        "restarts": record.restarts,
        "driverState": record.driver_state,
        "executorState": {
            "running": record.executors_running,
            "pending": record.executors_pending,
        },
        "exitCode": record.exit_code,
        "errorMessage": record.error_message,
        "requested": record.requested,
        "requestedBy": record.requested_by,
        "nextAttemptAt": _time(record.next_attempt_at),
        "runningSince": _time(record.running_since),
        "lastHeartbeatAt": _time(record.last_heartbeat_at),
        "sparkApplicationId": record.spark_app_id,
        "latest": record.latest or {},
    }


def details_document(details: ApplicationDetails) -> dict[str, Any]:
    document = application_document(details.application)
    document["attempts"] = [attempt_document(attempt) for attempt in details.attempts]
    document["executors"] = details.executors
    return document


def attempt_document(attempt: AttemptRecord) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "pid": attempt.pid,
        "master": attempt.master,
        "uiPort": attempt.ui_port,
        "submittedAt": _time(attempt.submitted_at),
        "runningAt": _time(attempt.running_at),
        "endedAt": _time(attempt.ended_at),
        "exitCode": attempt.exit_code,
        "outcome": attempt.outcome,
    }


def event_document(event: ApplicationEventRecord) -> dict[str, Any]:
    return {"id": event.id, "at": _time(event.at), "kind": event.kind, "message": event.message}


def _time(moment: datetime | None) -> str | None:
    return iso_time(moment) if moment else None
