"""What a job's pages show about upgrades: the "changed since running" state, the Upgrade button
(and why it is disabled), a compatibility check's report in words, and the job's history of
upgrades with the diff of each one's two specs. The job page and the part htmx refreshes render
it (``web.routes.job_detail``); the Upgrade and Check compatibility posts answer with it
(``web.routes.upgrades``, ``web.routes.job_form``).

As for the job page's other buttons, the missing permission is said first, then why there is
nothing to upgrade; the upgrade service decides again when the form is posted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.errors import Conflict, FieldConflict, FieldError, InvalidInput
from streamjobs.domain.manifest import UpgradePolicy
from streamjobs.domain.spec import split_server_fields
from streamjobs.domain.states import AppState, label
from streamjobs.domain.upgrades import UpgradeMode, changed_since_running
from streamjobs.services.compatibility import CompatibilityReport
from streamjobs.services.container import Services
from streamjobs.services.upgrade_documents import upgrade_diff
from streamjobs.store import JobRecord
from streamjobs.store.upgrades import UpgradeRecord
from streamjobs.web.job_refusals import needs_permission
from streamjobs.web.job_view import JobApplications

DEFAULT_ROLLBACK_SECONDS = UpgradePolicy().rollback_within_seconds
"""``spec.upgrade.rollbackWithinSeconds`` when the manifest leaves it out."""
UPGRADE_REFUSALS = {
    "no-service": "This server does not upgrade running applications",
    "none": "The job has no running application to upgrade",
    "current": "{name} runs the job's current version: configure the job, then upgrade it",
    "not-running": "Only a running application can be upgraded; {name} is {state}",
}
CHECK_REFUSAL_NO_SERVICE = "This server cannot check new specs against running applications"


@dataclass(frozen=True)
class ModeChoice:
    """An upgrade mode as the dialog offers it, with what it does in one line."""

    value: str
    label: str
    description: str


MODES = (
    ModeChoice(
        UpgradeMode.LAST_STATE.value,
        "Last state",
        "Stops the application after its micro-batch in flight and starts the new spec on the "
        "same checkpoint: its state and the inputs' offsets go on.",
    ),
    ModeChoice(
        UpgradeMode.SNAPSHOT.value,
        "Snapshot",
        "Stops it with an aligned snapshot of its checkpoint and starts the new spec on a copy "
        "of that snapshot.",
    ),
    ModeChoice(
        UpgradeMode.STATELESS.value,
        "Stateless",
        "Starts the new spec on a fresh checkpoint, without state, its inputs read from their "
        "startingOffsets; the old checkpoint is kept as a snapshot. Nothing is checked.",
    ),
)


@dataclass(frozen=True)
class Reason:
    """One reason the new spec does not fit (or one problem of the form), where it is."""

    path: str
    message: str
    rule: str = ""


@dataclass(frozen=True)
class CheckView:
    """A compatibility check's answer as the page shows it: a report, or why none was made."""

    mode: str = UpgradeMode.LAST_STATE.value
    compatible: bool | None = None
    """None when there is no report: the check or the upgrade was refused (``refusal``), or the
    form it was asked for has problems (``problems``)."""
    reasons: tuple[Reason, ...] = ()
    warnings: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    """What the dry run replayed, query by query, in words."""
    refusal: str | None = None
    problems: tuple[Reason, ...] = ()
    upgrading: bool = False
    """The answer to Upgrade (refused), not to Check compatibility."""


@dataclass(frozen=True)
class ApplicationLink:
    id: str
    name: str


@dataclass(frozen=True)
class DiffLine:
    """A line of a unified diff and what it is: ``file``, ``hunk``, ``added``, ``removed`` or
    ``same`` (its CSS class)."""

    kind: str
    text: str


@dataclass(frozen=True)
class UpgradeRow:
    """One upgrade as the job's history shows it."""

    id: str
    mode: str
    status: str
    from_version: int
    to_version: int
    rollback_version: int | None
    from_application: ApplicationLink | None
    to_application: ApplicationLink | None
    rollback_application: ApplicationLink | None
    snapshot: str | None
    requested_by: str
    requested_at: str
    started_at: str | None
    watch_until: str | None
    finished_at: str | None
    reason: str | None
    record: UpgradeRecord = field(repr=False, compare=False)

    @property
    def diff(self) -> tuple[DiffLine, ...]:
        """What the upgrade changed: the diff of its two specs as YAML (made when shown: the
        part htmx refreshes shows none)."""
        return diff_lines(upgrade_diff(self.record))


@dataclass(frozen=True)
class JobUpgrades:
    """The upgrade parts of a job's page: Upgrade and the history (the badge is the job
    document's ``status.changedSinceRunning``)."""

    running_version: int | None
    job_version: int
    application_name: str
    refusal: str | None
    rollback_seconds: int
    history: tuple[UpgradeRow, ...]

    modes: tuple[ModeChoice, ...] = MODES


@dataclass(frozen=True)
class FormCheck:
    """Check compatibility on the Configure form: why it is disabled, and its last answer."""

    refusal: str | None
    report: CheckView | None = None


def job_upgrades(
    services: Services, job: JobRecord, actor: Actor, applications: JobApplications
) -> JobUpgrades:
    """Whether the job changed since its live application started, whether ``actor`` may
    upgrade it now (why not, in words), and its upgrades, newest first."""
    live = applications.live.application
    running_version = live.job_version if live is not None else None
    upgrades = services.upgrades
    names = {application.id: application.name for application in applications.newest}
    records = upgrades.list(job.name, actor=actor) if upgrades is not None else []
    return JobUpgrades(
        running_version=running_version,
        job_version=job.version,
        application_name=live.name if live is not None else "",
        refusal=_upgrade_refusal(services, job, actor, applications),
        rollback_seconds=rollback_seconds(job.manifest),
        history=tuple(upgrade_row(record, names) for record in records),
    )


def _upgrade_refusal(
    services: Services, job: JobRecord, actor: Actor, applications: JobApplications
) -> str | None:
    missing = services.jobs.permissions(job.name, actor=actor).get(JobAction.UPGRADE)
    if missing is not None:
        return needs_permission(missing, job.bundle)
    if services.upgrades is None:
        return UPGRADE_REFUSALS["no-service"]
    live = applications.live.application
    if live is None:
        return UPGRADE_REFUSALS["none"]
    if live.state is not AppState.RUNNING:
        return UPGRADE_REFUSALS["not-running"].format(name=live.name, state=label(live.state))
    if not changed_since_running(job.version, live.job_version):
        return UPGRADE_REFUSALS["current"].format(name=live.name)
    return services.upgrades.upgrade_refusal(job.name, actor=actor)


def rollback_seconds(manifest: Mapping[str, Any]) -> int:
    """``spec.upgrade.rollbackWithinSeconds`` of a stored manifest (its default when absent)."""
    upgrade = (manifest.get("spec") or {}).get("upgrade") or {}
    seconds = upgrade.get("rollbackWithinSeconds", DEFAULT_ROLLBACK_SECONDS)
    return seconds if isinstance(seconds, int) else DEFAULT_ROLLBACK_SECONDS


def upgrade_row(record: UpgradeRecord, application_names: Mapping[str, str]) -> UpgradeRow:
    def link(application_id: str | None) -> ApplicationLink | None:
        if application_id is None:
            return None
        return ApplicationLink(
            application_id, application_names.get(application_id, application_id)
        )

    return UpgradeRow(
        id=record.id,
        mode=str(record.mode),
        status=str(record.status),
        from_version=record.from_job_version,
        to_version=record.to_job_version,
        rollback_version=record.rollback_job_version,
        from_application=link(record.from_application_id),
        to_application=link(record.to_application_id),
        rollback_application=link(record.rollback_application_id),
        snapshot=record.snapshot_name,
        requested_by=record.requested_by,
        requested_at=record.requested_at.isoformat(),
        started_at=record.started_at.isoformat() if record.started_at else None,
        watch_until=record.watch_until.isoformat() if record.watch_until else None,
        finished_at=record.finished_at.isoformat() if record.finished_at else None,
        reason=record.reason,
        record=record,
    )


def diff_lines(diff: str) -> tuple[DiffLine, ...]:
    """A unified diff's lines, each with its kind."""
    lines = []
    for text in diff.splitlines():
        if text.startswith(("--- ", "+++ ")):
            kind = "file"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "added"
        elif text.startswith("-"):
            kind = "removed"
        else:
            kind = "same"
        lines.append(DiffLine(kind, text))
    return tuple(lines)


def parsed_mode(value: str) -> UpgradeMode | None:
    """The mode a form chose; None for one that is no mode (a form not of this server)."""
    try:
        return UpgradeMode(value.strip() or UpgradeMode.LAST_STATE.value)
    except ValueError:
        return None


def unknown_mode(value: str, *, upgrading: bool = False) -> CheckView:
    choices = ", ".join(mode.value for mode in UpgradeMode)
    return CheckView(
        mode=UpgradeMode.LAST_STATE.value,
        refusal=f"{value!r} is no upgrade mode; choose one of {choices}",
        upgrading=upgrading,
    )


def report_view(report: CompatibilityReport, mode: str) -> CheckView:
    """The check's report in words: every reason (static rules, then the dry run's), the
    warnings, and what the dry run replayed."""
    dry_run = report.dry_run
    replayed = tuple(
        f"query {query.query}: batch {query.batch} replayed, "
        f"{'it fits' if query.error is None else 'it failed'}"
        if query.batch is not None
        else f"query {query.query}: {'nothing to replay' if query.error is None else 'failed'}"
        for query in (dry_run.queries if dry_run else [])
    )
    return CheckView(
        mode=mode,
        compatible=report.compatible,
        reasons=tuple(Reason(item.path, item.message, item.rule) for item in report.reasons),
        warnings=tuple(report.warnings),
        queries=replayed,
    )


def refusal_view(
    refused: Conflict | InvalidInput, mode: str, *, upgrading: bool = False
) -> CheckView:
    """A refused check or upgrade: each field a ``FieldConflict`` names (the new spec does not
    fit; the dry run needs a secret the bundle lacks), else the refusal's reason (nothing to
    upgrade; the job's stored manifest no longer valid)."""
    if isinstance(refused, FieldConflict):
        reasons = tuple(Reason(error.path, error.message) for error in refused.errors)
        return CheckView(mode=mode, compatible=False, reasons=reasons, upgrading=upgrading)
    return CheckView(mode=mode, refusal=refused.detail, upgrading=upgrading)


def problems_view(problems: Iterable[FieldError]) -> CheckView:
    """The form's problems, when it cannot be checked as it is."""
    return CheckView(problems=tuple(Reason(item.path, item.message) for item in problems))


def form_check(
    services: Services, job: JobRecord, actor: Actor, report: CheckView | None = None
) -> FormCheck:
    """Check compatibility on the job's Configure form, and its last answer."""
    missing = services.jobs.permissions(job.name, actor=actor).get(JobAction.UPGRADE)
    if missing is not None:
        return FormCheck(needs_permission(missing, job.bundle), report)
    if services.compatibility is None:
        return FormCheck(CHECK_REFUSAL_NO_SERVICE, report)
    return FormCheck(None, report)


def checked_form(
    services: Services, job_name: str, manifest: dict[str, Any], actor: Actor
) -> CheckView:
    """Whether the form's ``manifest`` could continue from the checkpoint of the job's running
    application (nothing is saved); ``InvalidInput`` naming each field the manifest breaks."""
    compatibility = services.compatibility
    if compatibility is None:
        return CheckView(refusal=CHECK_REFUSAL_NO_SERVICE)
    new_manifest, _ = split_server_fields(manifest)
    try:
        report = compatibility.check(job_name, new_manifest, actor=actor)
    except Conflict as refused:
        return refusal_view(refused, UpgradeMode.LAST_STATE.value)
    return report_view(report, UpgradeMode.LAST_STATE.value)
