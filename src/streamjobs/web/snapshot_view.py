"""What a job's page shows about its snapshots: the Snapshots tab's rows, and why Take snapshot,
Suspend, Delete and the starts from a snapshot are disabled (``web.routes.job_detail`` and
``web.routes.snapshots`` render it; the part htmx refreshes renders it too).

As for Stop and Resume (``web.job_view``), the missing permission is said first, then what the
job or its live application lacks; the services decide again when the form is posted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from streamjobs import formatting
from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.errors import CannotRun, NotFound
from streamjobs.domain.snapshots import SnapshotStatus
from streamjobs.domain.states import AppState
from streamjobs.services.container import Services
from streamjobs.store import ApplicationRecord, JobRecord
from streamjobs.store.snapshots import SnapshotRecord
from streamjobs.web.job_refusals import JobRefusals, needs_permission
from streamjobs.web.job_view import JobApplications

SNAPSHOT_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}"
"""``domain.formats.SnapshotName`` as an HTML ``pattern`` (the whole value must match)."""
TAKE_REFUSALS = {
    "not-pipeline": "Snapshots are kept for pipeline jobs only: streamjobs knows a pipeline's "
    "checkpoint, not a program's",
    "no-checkpoint": "The job keeps no checkpoint (processing guarantee NONE, or batch mode), so "
    "there is nothing to snapshot",
    "not-running": "Snapshots are taken while the job's application is running",
}
SUSPEND_REFUSALS = {
    "none": "The job has no live application to suspend",
    "stopping": "Its application is already being stopped",
    "suspended": "Its application is already suspended",
}
TAKING_DELETE_REFUSAL = "It is being taken; delete it once it is ready or has failed"
SUSPENDABLE = frozenset({AppState.STARTING, AppState.RUNNING, AppState.PENDING_RERUN})


@dataclass(frozen=True)
class SnapshotRow:
    """One snapshot as its row shows it."""

    name: str
    kind: str
    status: str
    application_id: str | None
    application_name: str | None
    batches: str
    positions: tuple[str, ...]
    size: str
    taken_at: str | None
    """ISO 8601; None while it is being taken (``requested_at`` says since when)."""
    requested_at: str
    requested_by: str | None
    error: str | None
    delete_refusal: str | None

    @property
    def ready(self) -> bool:
        return self.status == SnapshotStatus.READY


@dataclass(frozen=True)
class SnapshotsTab:
    """The Snapshots tab, and the snapshot actions beside Run and Stop."""

    pipeline: bool
    rows: tuple[SnapshotRow, ...]
    take_refusal: str | None
    suspend_refusal: str | None
    start_refusal: str | None
    """Why a start from a snapshot is disabled: Run's own refusal."""
    typed_name: str = ""
    """The name typed into a Take snapshot the server refused (shown again)."""
    name_error: str | None = None

    name_pattern: ClassVar[str] = SNAPSHOT_NAME_PATTERN

    @property
    def ready(self) -> tuple[SnapshotRow, ...]:
        """The snapshots a Run can start from."""
        return tuple(row for row in self.rows if row.ready)

    @property
    def any_taking(self) -> bool:
        return any(row.status == SnapshotStatus.TAKING for row in self.rows)


@dataclass(frozen=True)
class ReplayOffer:
    """A start from ``snapshot`` was refused: the page offers it again, allowing replay."""

    snapshot: str


def snapshots_tab(
    services: Services,
    job: JobRecord,
    actor: Actor,
    applications: JobApplications,
    refusals: JobRefusals,
    typed_name: str = "",
    name_error: str | None = None,
) -> SnapshotsTab:
    """The job's snapshots, newest first, and what ``actor`` may do with them now (a start
    from a snapshot is a Run: ``refusals.run`` says why it may not)."""
    missing = services.jobs.permissions(job.name, actor=actor)

    def refusal(action: JobAction) -> str | None:
        permission = missing.get(action)
        return None if permission is None else needs_permission(permission, job.bundle)

    live = applications.live.application
    names = {application.id: application.name for application in applications.newest}
    delete_permission = refusal(JobAction.CONFIGURE)
    records = services.snapshots.list(job.name, actor=actor)
    return SnapshotsTab(
        pipeline=is_pipeline(job.manifest),
        rows=tuple(snapshot_row(record, names, delete_permission) for record in records),
        take_refusal=refusal(JobAction.SNAPSHOT) or take_refusal(job.manifest, live),
        suspend_refusal=refusal(JobAction.SUSPEND) or suspend_refusal(live),
        start_refusal=refusals.run,
        typed_name=typed_name,
        name_error=name_error,
    )


def snapshot_row(
    record: SnapshotRecord, application_names: Mapping[str, str], delete_permission: str | None
) -> SnapshotRow:
    taking = record.status is SnapshotStatus.TAKING
    application = record.application_id
    return SnapshotRow(
        name=record.name,
        kind=str(record.kind),
        status=str(record.status),
        application_id=application,
        application_name=application_names.get(application, application) if application else None,
        batches=batches_text(record.batches),
        positions=tuple(f"{item.output}: {item.describe()}" for item in record.positions),
        size=formatting.size(record.size_bytes) if record.size_bytes is not None else "",
        taken_at=record.taken_at.isoformat() if record.taken_at else None,
        requested_at=record.requested_at.isoformat(),
        requested_by=record.requested_by,
        error=record.error,
        delete_refusal=delete_permission or (TAKING_DELETE_REFUSAL if taking else None),
    )


def batches_text(batches: Mapping[str, int]) -> str:
    """The last committed batch of each query: ``batch 12``, or ``lake 12, audit 9``."""
    if not batches:
        return "none committed yet"
    if len(batches) == 1:
        return f"batch {next(iter(batches.values()))}"
    return ", ".join(f"{query} {batch}" for query, batch in sorted(batches.items()))


def is_pipeline(manifest: Mapping[str, Any]) -> bool:
    application = manifest.get("spec", {}).get("application") or {}
    return bool(application.get("type") == "pipeline")


def take_refusal(manifest: Mapping[str, Any], live: ApplicationRecord | None) -> str | None:
    """Why no snapshot can be taken now, whoever asks; None when one can."""
    if not is_pipeline(manifest):
        return TAKE_REFUSALS["not-pipeline"]
    spec = manifest.get("spec", {})
    processing = spec.get("processing") or {}
    if processing.get("guarantee") == "NONE" or (spec.get("pipeline") or {}).get("batchMode"):
        return TAKE_REFUSALS["no-checkpoint"]
    if live is None or live.state is not AppState.RUNNING:
        return TAKE_REFUSALS["not-running"]
    return None


def suspend_refusal(live: ApplicationRecord | None) -> str | None:
    """Why the live application cannot be suspended now; None when it can."""
    if live is None:
        return SUSPEND_REFUSALS["none"]
    if live.state is AppState.SUSPENDED:
        return SUSPEND_REFUSALS["suspended"]
    if live.state not in SUSPENDABLE:
        return SUSPEND_REFUSALS["stopping"]
    return None


def replay_offer(error: Exception, from_snapshot: str, allow_replay: bool) -> ReplayOffer | None:
    """After a refused start from ``from_snapshot``: the offer to start again allowing replay,
    unless replay was allowed already or the refusal has nothing to do with the outputs (the job
    cannot run; the page drops the offer too while the job has a live application)."""
    if not from_snapshot or allow_replay or isinstance(error, (CannotRun, NotFound)):
        return None
    return ReplayOffer(snapshot=from_snapshot)
