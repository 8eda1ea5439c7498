"""The upgrade use cases: move a job's running application to the job's current spec, check
first whether it can, and read the job's upgrades back.

Configuring a job leaves its running application on the spec it started with; the job is then
"changed since running" (``domain.upgrades.changed_since_running``). An upgrade needs such an
application, RUNNING, and no other upgrade of the job in progress. In last-state and snapshot
mode the new spec must fit the running one's checkpoint: the compatibility check
(``services.compatibility``) runs before anything is stopped, and its refusal is a 409 listing
each reason. The upgrade is then recorded STOPPING and the application asked to stop gracefully,
a pipeline taking an aligned snapshot of kind ``upgrade`` (the rollback point); the supervisor
carries out the rest (``services.upgrade_progress``).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.compatibility import Incompatibility
from streamjobs.domain.errors import Conflict, InvalidInput
from streamjobs.domain.manifest import ApplicationType, Guarantee, StreamingJob
from streamjobs.domain.snapshots import SnapshotKind, automatic_name
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.domain.upgrades import UpgradeMode, changed_since_running
from streamjobs.services.access import require_job
from streamjobs.services.application_state import move
from streamjobs.services.compatibility import CompatibilityReport
from streamjobs.services.job_references import ServerPlaces
from streamjobs.services.resources import audit, on_fresh_reads
from streamjobs.services.snapshot_restore import local_checkpoint
from streamjobs.services.upgrade_moves import Starter
from streamjobs.services.upgrade_progress import UpgradeProgress
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.jobs import JobRecord
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.upgrades import UpgradeRecord

UPGRADE_REQUEST = "upgrade"
"""The application's ``requested``: a graceful stop with an upgrade snapshot, ending STOPPED."""
STATELESS_NOTE = (
    "stateless: the new spec starts on a fresh checkpoint (the one it has is kept as a snapshot "
    "of kind replaced) and reads its inputs from their startingOffsets, so nothing is checked "
    "against the running spec's state"
)


class CompatibilityChecker(Protocol):
    """Whether a job's new spec (None: its current one) can continue from the checkpoint of
    its live application (``services.compatibility.CompatibilityCheck``); needs UPGRADE."""

    def check(
        self, job_name: str, new_manifest: dict[str, Any] | None = None, *, actor: Actor
    ) -> CompatibilityReport: ...


@dataclass(frozen=True)
class _Basis:
    """What an upgrade of a job starts from, read in one transaction."""

    job: JobRecord
    live: ApplicationRecord
    snapshots: bool
    """The live application takes an aligned snapshot at its graceful stop."""


class UpgradeService:
    """Upgrades of jobs' running applications, on behalf of an actor or of the server."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        checkpoint_root: str,
        starter: Starter,
        places: ServerPlaces,
        compatibility: CompatibilityChecker | None,
    ) -> None:
        """``starter`` starts applications (``ApplicationService``); ``compatibility`` checks
        new specs against running ones (None: this server cannot, so only stateless upgrades
        are possible)."""
        self._store = store
        self._clock = clock
        self._checkpoint_root = checkpoint_root
        self._compatibility = compatibility
        self._progress = UpgradeProgress(
            store=store,
            clock=clock,
            starter=starter,
            places=places,
            checkpoint_root=checkpoint_root,
        )

    def check(self, job_name: str, *, mode: UpgradeMode, actor: Actor) -> CompatibilityReport:
        """What an upgrade of the job in ``mode`` would find (a dry run: nothing is stopped);
        ``Conflict`` when there is nothing to upgrade."""
        basis = self._basis(job_name, mode, actor)
        return self._report(basis, mode, actor)

    def upgrade(self, job_name: str, *, mode: UpgradeMode, actor: Actor) -> UpgradeRecord:
        """Move the job's running application to its current spec in ``mode``; the upgrade,
        STOPPING. ``FieldConflict`` listing each reason the new spec does not fit (nothing is
        stopped then); ``Conflict`` when there is nothing to upgrade or an upgrade is in
        progress."""
        basis = self._basis(job_name, mode, actor)
        self._report(basis, mode, actor).raise_if_incompatible()
        return retried_on_contention(
            lambda: on_fresh_reads(lambda: self._request(basis, mode, actor))
        )

    def upgrade_refusal(self, job_name: str, *, actor: Actor) -> str | None:
        """Why an upgrade of the job would be refused before any check, in words; None when it
        would not be (for a button: ``upgrade`` checks again)."""
        try:
            self._basis(job_name, UpgradeMode.LAST_STATE, actor)
        except Conflict as refused:
            return refused.detail
        return None

    def list(self, job_name: str, *, actor: Actor) -> builtins.list[UpgradeRecord]:
        """The job's upgrades, newest first."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            return repos.upgrades.list(job_name)

    def get(self, job_name: str, upgrade_id: str, *, actor: Actor) -> UpgradeRecord:
        """The job's upgrade ``upgrade_id``; ``NotFound`` if the job has none of that id."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            return repos.upgrades.of_job(job_name, upgrade_id)

    # server-internal: the supervisor's upgrade step

    def active(self) -> Sequence[str]:
        """The ids of the upgrades in progress, oldest first."""
        with self._store.reading() as repos:
            return [upgrade.id for upgrade in repos.upgrades.active()]

    def advance(self, upgrade_id: str) -> UpgradeRecord:
        """Move the upgrade on as far as it can go now (``UpgradeProgress``)."""
        return self._progress.advance(upgrade_id)

    # -----------------------------------------------------------------------------------------

    def _basis(self, job_name: str, mode: UpgradeMode, actor: Actor) -> _Basis:
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.UPGRADE)
            return self._upgradable(repos, job, mode)

    def _upgradable(self, repos: Repositories, job: JobRecord, mode: UpgradeMode) -> _Basis:
        """What an upgrade of ``job`` in ``mode`` starts from; ``Conflict`` saying why there
        is nothing to upgrade, or why not in this mode."""
        name = job.name
        ongoing = repos.upgrades.active_for_job(name)
        if ongoing is not None:
            raise Conflict(
                f"job {name!r} has an upgrade in progress ({ongoing.id}, {ongoing.status}); "
                "wait until it has ended"
            )
        live = repos.applications.live_for_job(name)
        if live is None:
            raise Conflict(f"nothing to upgrade: job {name!r} has no running application; run it")
        if live.state is not AppState.RUNNING:
            raise Conflict(
                f"nothing to upgrade: job {name!r}'s application {live.name} is {live.state}; "
                "an upgrade moves a RUNNING application"
            )
        if live.job_version is None:
            raise Conflict(
                f"nothing to upgrade: {live.name} does not record which version of job {name!r} "
                "it runs; stop it and run the job"
            )
        if not changed_since_running(job.version, live.job_version):
            raise Conflict(
                f"nothing to upgrade: {live.name} runs version {live.job_version} of job "
                f"{name!r}, its current version"
            )
        running = _parsed(repos.applications.spec(live.id))
        snapshots = running is not None and self._takes_snapshots(running)
        if mode is UpgradeMode.SNAPSHOT and not snapshots:
            raise Conflict(
                f"job {name!r}'s application takes no snapshots (it is no pipeline keeping a "
                "checkpoint on this machine): upgrade it in last-state mode"
            )
        if mode is UpgradeMode.STATELESS:
            self._require_fresh_start(job)
        return _Basis(job=job, live=live, snapshots=snapshots)

    def _require_fresh_start(self, record: JobRecord) -> None:
        """``Conflict`` unless the server can start the job's current spec on a fresh
        checkpoint: a pipeline whose checkpoint (if it keeps one) is on this machine."""
        try:
            job = parse_manifest(record.manifest, checkpoint_root=self._checkpoint_root)
        except InvalidInput:
            return  # the start refuses it, naming each field
        pipeline = job.spec.pipeline
        if job.spec.application.type is not ApplicationType.PIPELINE or pipeline is None:
            raise Conflict(
                f"job {record.name!r} runs a python or jvm program, whose checkpoints are its "
                "own: the server cannot start it on a fresh one; upgrade it in last-state mode"
            )
        keeps = not pipeline.batch_mode and job.spec.processing.guarantee is not Guarantee.NONE
        if keeps and local_checkpoint(job, self._checkpoint_root) is None:
            raise Conflict(
                f"job {record.name!r} checkpoints off this machine, so the server cannot set its "
                "checkpoint aside; upgrade it in last-state mode"
            )

    def _takes_snapshots(self, job: StreamingJob) -> bool:
        """Whether ``job``'s graceful stop takes an aligned snapshot: a streaming pipeline
        keeping its checkpoint on this machine (as ``supervisor.terms`` decides)."""
        pipeline = job.spec.pipeline
        return (
            pipeline is not None
            and not pipeline.batch_mode
            and job.spec.processing.guarantee is not Guarantee.NONE
            and local_checkpoint(job, self._checkpoint_root) is not None
        )

    def _report(self, basis: _Basis, mode: UpgradeMode, actor: Actor) -> CompatibilityReport:
        if not mode.continues_state:
            return CompatibilityReport(True, [], [STATELESS_NOTE], None)
        if self._compatibility is None:
            refusal = Incompatibility(
                "spec",
                "no-check",
                "this server cannot check whether the new spec fits the running one's "
                "checkpoint; upgrade in stateless mode, or stop the job and run it",
            )
            return CompatibilityReport(False, [refusal], [], None)
        return self._compatibility.check(basis.job.name, actor=actor)

    def _request(self, basis: _Basis, mode: UpgradeMode, actor: Actor) -> UpgradeRecord:
        now = self._clock.now()
        with self._store.transaction() as repos:
            repos.jobs.lock(basis.job.name)
            job = repos.jobs.get(basis.job.name)
            require_job(repos, actor, job.name, job.bundle, JobAction.UPGRADE)
            current = self._upgradable(repos, job, mode)
            if job.version != basis.job.version or current.live.id != basis.live.id:
                raise Conflict(
                    f"job {job.name!r} changed while its upgrade was being checked (it is at "
                    f"version {job.version} now); ask for the upgrade again"
                )
            live = current.live
            snapshot = automatic_name(SnapshotKind.UPGRADE, now) if current.snapshots else None
            target = resolved_template(
                parse_manifest(job.manifest, checkpoint_root=self._checkpoint_root),
                checkpoint_root=self._checkpoint_root,
            )
            upgrade = repos.upgrades.add(
                job_name=job.name,
                mode=mode,
                from_application_id=live.id,
                from_job_version=live.job_version or 0,
                to_job_version=job.version,
                from_spec=repos.applications.spec(live.id),
                to_spec=target,
                snapshot_name=snapshot,
                requested_by=actor.name,
                requested_at=now,
            )
            with_snapshot = f", taking snapshot {snapshot}" if snapshot else ""
            move(
                repos,
                live,
                AppEvent.STOP_REQUESTED,
                at=now,
                changes={
                    "requested": UPGRADE_REQUEST,
                    "requested_at": now,
                    "requested_by": actor.name,
                },
                note=(
                    "upgrade-requested",
                    f"upgrade {upgrade.id} to job version {job.version} ({mode}) requested by "
                    f"{actor.name}: stopping after the micro-batch in flight{with_snapshot}",
                ),
            )
            audit(
                repos,
                self._clock,
                actor,
                "job.upgrade",
                kind="job",
                name=job.name,
                detail={
                    "upgrade": upgrade.id,
                    "mode": str(mode),
                    "application": live.id,
                    "fromVersion": upgrade.from_job_version,
                    "toVersion": job.version,
                },
            )
            return upgrade


def _parsed(spec: dict[str, Any]) -> StreamingJob | None:
    """A running application's spec; None when it no longer passes validation."""
    try:
        return parse_manifest(spec)
    except InvalidInput:
        return None
