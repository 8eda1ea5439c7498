"""How applications look over HTTP: camelCase documents built from the store's records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from streamjobs.services.application_reads import StandbyDriver
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
    document["standby"] = standby_document(details.standby) if details.standby else None
    return document


def standby_document(standby: StandbyDriver) -> dict[str, Any]:
    """The standby driver an application holds: its attempt, ``starting`` or ``ready`` (since
    ``readyAt``), and its process."""
    attempt = standby.attempt
    return {
        "attempt": attempt.number,
        "state": str(standby.state),
        "pid": attempt.pid,
        "submittedAt": _time(attempt.submitted_at),
        "readyAt": _time(attempt.running_at),
    }


def attempt_document(attempt: AttemptRecord) -> dict[str, Any]:
    """An attempt: where its driver runs (``deployMode`` local, client or cluster; a cluster-mode
    driver's ``submissionId`` at the standalone master and the host of its worker), when it
    started and ended, and how; whether it was started as a standby driver, and when it was
    promoted (None while it is held: not the application's driver yet)."""
    return {
        "number": attempt.number,
        "deployMode": deploy_mode_of(attempt),
        "pid": attempt.pid,
        "submissionId": attempt.submission_id,
        "master": attempt.master,
        "driverHost": attempt.driver_host,
        "launchedOn": attempt.launched_on,
        "uiPort": attempt.ui_port,
        "submittedAt": _time(attempt.submitted_at),
        "runningAt": _time(attempt.running_at),
        "endedAt": _time(attempt.ended_at),
        "exitCode": attempt.exit_code,
        "outcome": attempt.outcome,
        "standby": attempt.standby,
        "promotedAt": _time(attempt.promoted_at),
    }


def deploy_mode_of(attempt: AttemptRecord) -> str | None:
    """``cluster`` for a driver submitted to a standalone master, ``client`` for one on the
    server's host with a cluster's executors, ``local`` for ``local[N]``; None before the
    driver started."""
    if attempt.submission_id:
        return "cluster"
    if not attempt.master:
        return None
    return "local" if attempt.master.startswith("local") else "client"


def event_document(event: ApplicationEventRecord) -> dict[str, Any]:
    return {"id": event.id, "at": _time(event.at), "kind": event.kind, "message": event.message}


def _time(moment: datetime | None) -> str | None:
    return iso_time(moment) if moment else None
