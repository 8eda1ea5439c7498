"""The application use cases: Run, Stop, Suspend, Resume and Abort, and reading applications back
(``application_reads``).

Run stores a new application in STARTING with an immutable snapshot of the job's resolved
template, started from the job's checkpoint as it is or from a copy of one of its snapshots
(``snapshot_starts``); the supervisor submits its driver at its next tick. Stop, Suspend and
Abort record the request and move the application on through the state machine (TERMINATING
while a driver may be up); the supervisor carries them out. Resume starts a suspended application
again with the job as edited since. Every request is audited in the transaction that makes it,
and each is a whole transaction, run again when the database rolls it back for contention.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.deployment_rules import cluster_settings_errors, deployment_errors
from streamjobs.domain.errors import Conflict, InvalidInput, NotFound
from streamjobs.domain.jar_requests import JarRequest
from streamjobs.domain.manifest import Deployment, StreamingJob
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import LIVE_STATES, AppEvent, AppState
from streamjobs.services.access import require_job

# ApplicationDetails and ApplicationQuery are re-exported: the API and the web UI import them here
from streamjobs.services.application_reads import (
    ApplicationDetails as ApplicationDetails,
)
from streamjobs.services.application_reads import (
    ApplicationQuery as ApplicationQuery,
)
from streamjobs.services.application_reads import ApplicationReads
from streamjobs.services.application_state import created, move
from streamjobs.services.resources import audit, on_fresh_reads
from streamjobs.services.run_checks import (
    check_runnable,
    initial_snapshot_refusals,
    jar_refusals,
    reserve_demand,
    run_refusals,
)
from streamjobs.services.snapshot_starts import Restorer, start_fresh, start_from_snapshot
from streamjobs.store import (
    ApplicationRecord,
)
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention


class ApplicationService(ApplicationReads):
    """Starts, stops and (through ``ApplicationReads``) reads applications on behalf of an
    actor."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        checkpoint_root: str,
        jar_failures: Callable[[JarRequest], str | None] | None = None,
        deployments: Collection[Deployment] = tuple(Deployment),
        snapshots: Restorer | None = None,
        cluster_problems: Sequence[str] = (),
    ) -> None:
        """``jar_failures`` tells how the latest resolution of a job's jars failed, if it did
        (``launch.jars``): Run and Resume refuse such a job rather than fail at its launch.
        ``deployments`` are those the server can launch (standard needs a standalone master).
        ``snapshots`` restores a job's checkpoint from a snapshot (None: no Run starts from
        one). ``cluster_problems`` keep the server's standalone cluster from reaching it or its
        drivers (``domain.cluster_addresses``): standard jobs cannot run while there are any."""
        self._snapshots = snapshots
        self._cluster_problems = tuple(cluster_problems)
        self._store = store
        self._clock = clock
        self._checkpoint_root = checkpoint_root
        self._jar_failures = jar_failures
        self._deployments = deployments

    def run(
        self,
        job_name: str,
        *,
        actor: Actor,
        from_snapshot: str | None = None,
        allow_replay: bool = False,
    ) -> ApplicationRecord:
        """Start a new application of the job; ``Conflict`` naming the live one if there is one.

        It starts from a copy of snapshot ``from_snapshot`` when given, else from the job's
        ``initialSnapshotName`` while its checkpoint holds no state, else from the checkpoint as
        it is; a snapshot older than an output's position is refused unless ``allow_replay``.
        The job's row is held first, so a Delete of the job either waits for this Run (and sees
        its application) or has deleted the job already (``NotFound``): no application of a
        deleted job is ever stored."""
        return retried_on_contention(
            lambda: self._run(
                job_name, actor=actor, from_snapshot=from_snapshot, allow_replay=allow_replay
            )
        )

    def _run(
        self, job_name: str, *, actor: Actor, from_snapshot: str | None, allow_replay: bool
    ) -> ApplicationRecord:
        with self._store.transaction() as repos:
            return self.start_in(
                repos, job_name, actor=actor, from_snapshot=from_snapshot, allow_replay=allow_replay
            )

    def start_in(
        self,
        repos: Repositories,
        job_name: str,
        *,
        actor: Actor,
        from_snapshot: str | None = None,
        allow_replay: bool = False,
        fresh_checkpoint: bool = False,
        note: tuple[str, str] | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> ApplicationRecord:
        """What ``run`` does, in the caller's transaction (``repos``): an upgrade starts the
        job's current spec so, in the transaction that records its step. ``fresh_checkpoint``
        starts it on a fresh checkpoint, the one it had kept as a snapshot of kind replaced (a
        stateless upgrade; ``initialSnapshotName`` is not used then). ``note`` (kind, message)
        replaces the application's ``run-requested`` event; ``detail`` adds to the audit's."""
        now = self._clock.now()
        repos.jobs.lock(job_name)
        job = repos.jobs.get(job_name)
        require_job(repos, actor, job.name, job.bundle, JobAction.RUN)
        starting = from_snapshot is None and not fresh_checkpoint
        checked = self._checked(repos, job.manifest, starting=starting)
        spec = resolved_template(checked, checkpoint_root=self._checkpoint_root)
        run_as = (spec["spec"].get("runAs")) or job.created_by
        demand = reserve_demand(repos, job.bundle, spec)
        application = repos.applications.add(
            job_name=job.name,
            namespace=job.namespace,
            bundle=job.bundle,
            tags=dict(job.tags),
            spec=spec,
            state=AppState.STARTING,
            triggered_by=actor.name,
            run_as=run_as,
            at=now,
            demand=demand,
            job_version=job.version,
        )
        repos.jobs.set_status(job.name, str(AppState.STARTING))
        created(repos, application, at=now)
        kind, message = note or ("run-requested", f"run by {actor.name}")
        repos.applications.add_event(application.id, at=now, kind=kind, message=message)
        audited: dict[str, Any] = {"application": application.id, **(detail or {})}
        if fresh_checkpoint:  # last: it moves directories
            audited["freshCheckpoint"] = True
            start_fresh(self._snapshots, repos, checked, application, actor=actor, at=now)
        else:
            started_from = start_from_snapshot(  # last: it moves directories
                self._snapshots,
                repos,
                checked,
                application,
                from_snapshot=from_snapshot,
                allow_replay=allow_replay,
                checkpoint_root=self._checkpoint_root,
                actor=actor,
                at=now,
            )
            if started_from is not None:
                audited["fromSnapshot"] = started_from
        self._audit(repos, actor, "job.run", job.name, audited)
        return application

    def stop(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        """Stop the job's live application gracefully, after its micro-batch in flight."""
        return self._request(job_name, AppEvent.STOP_REQUESTED, "stop", JobAction.STOP, actor=actor)

    def suspend(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        """Stop the job's live application gracefully (a pipeline with an aligned snapshot) and
        leave it SUSPENDED until Resume; one waiting for a restart suspends at once."""
        return self._request(
            job_name, AppEvent.SUSPEND_REQUESTED, "suspend", JobAction.SUSPEND, actor=actor
        )

    def resume(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        """Start a suspended application again from its checkpoint, with the job as it is now."""
        return _retried(lambda: self._resume(job_name, actor=actor))

    def _resume(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        now = self._clock.now()
        with self._store.transaction() as repos:
            repos.jobs.lock(job_name)  # the job's row before the bundle's, as Run takes them
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.RESUME)
            application = self._live(repos, job_name)
            spec = self._snapshot(repos, job.manifest)
            demand = reserve_demand(repos, job.bundle, spec)
            resumed = move(
                repos,
                application,
                AppEvent.RESUMED,
                at=now,
                changes={
                    "spec": spec,
                    "job_version": job.version,
                    "cores": demand.cores,
                    "memory_mb": demand.memory_mb,
                    "submission_failures": 0,
                    "execution_failures": 0,
                    "error_message": None,
                    "requested": None,
                    "requested_at": None,
                    "requested_by": None,
                },
                note=("resumed", f"resumed by {actor.name} with job version {job.version}"),
            )
            self._audit(repos, actor, "job.resume", job_name, {"application": application.id})
            return resumed

    def abort(self, application_id: str, *, actor: Actor) -> ApplicationRecord:
        """Abort an application: SIGTERM to its driver, SIGKILL after the grace period."""
        return _retried(lambda: self._abort(application_id, actor=actor))

    def _abort(self, application_id: str, *, actor: Actor) -> ApplicationRecord:
        with self._store.transaction() as repos:
            application = repos.applications.get(application_id)
            require_job(repos, actor, application.job_name, application.bundle, JobAction.ABORT)
            aborted = self._requested(repos, application, AppEvent.ABORT_REQUESTED, "abort", actor)
            self._audit(
                repos, actor, "application.abort", application.job_name, {"application": aborted.id}
            )
            return aborted

    def run_refusal(self, job_name: str, *, actor: Actor) -> str | None:
        """Why a Run of the job would be refused for what it needs now, in words; None when it
        would not be. For its button: Run itself checks again."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            try:
                self._checked(repos, job.manifest, starting=True)
            except (Conflict, InvalidInput) as refused:
                return refused.detail
        return None

    def _snapshot(self, repos: Repositories, manifest: dict[str, Any]) -> dict[str, Any]:
        """The job's resolved template, once nothing it needs is known to be missing."""
        job = self._checked(repos, manifest, starting=False)
        return resolved_template(job, checkpoint_root=self._checkpoint_root)

    def _checked(
        self, repos: Repositories, manifest: dict[str, Any], *, starting: bool
    ) -> StreamingJob:
        """The job, once nothing it needs is known to be missing; a Run ``starting`` from the
        job's initial snapshot also needs that snapshot."""
        job = parse_manifest(manifest, checkpoint_root=self._checkpoint_root)
        refusals = [
            *run_refusals(repos, job),
            *deployment_errors(job, self._deployments),
            *cluster_settings_errors(job, self._cluster_problems),
        ]
        if starting:
            refusals += initial_snapshot_refusals(repos, job, checkpoint_root=self._checkpoint_root)
        check_runnable([*refusals, *jar_refusals(job, self._jar_failures)], job.name)
        return job

    def _request(
        self, job_name: str, event: AppEvent, request: str, action: JobAction, *, actor: Actor
    ) -> ApplicationRecord:
        return _retried(lambda: self._request_once(job_name, event, request, action, actor=actor))

    def _request_once(
        self, job_name: str, event: AppEvent, request: str, action: JobAction, *, actor: Actor
    ) -> ApplicationRecord:
        with self._store.transaction() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, action)
            application = self._live(repos, job_name)
            changed = self._requested(repos, application, event, request, actor)
            self._audit(repos, actor, f"job.{request}", job_name, {"application": changed.id})
            return changed

    def _requested(
        self,
        repos: Repositories,
        application: ApplicationRecord,
        event: AppEvent,
        request: str,
        actor: Actor,
    ) -> ApplicationRecord:
        return request_on(repos, application, event, request, actor=actor, at=self._clock.now())

    def _live(self, repos: Repositories, job_name: str) -> ApplicationRecord:
        repos.jobs.get(job_name)
        application = repos.applications.live_for_job(job_name)
        if application is None:
            raise Conflict(f"job {job_name!r} has no live application")
        if application.state not in LIVE_STATES:  # pragma: no cover - the store guarantees it
            raise NotFound("live application of job", job_name)
        return application

    def _audit(
        self, repos: Repositories, actor: Actor, action: str, name: str, detail: dict[str, Any]
    ) -> None:
        audit(repos, self._clock, actor, action, kind="job", name=name, detail=detail)


def request_on(
    repos: Repositories,
    application: ApplicationRecord,
    event: AppEvent,
    request: str,
    *,
    actor: Actor,
    at: datetime,
) -> ApplicationRecord:
    """Record ``actor``'s ``request`` ("stop", "suspend" or "abort") of ``application`` and move
    it on by ``event``, for the supervisor to carry out; ``IllegalTransition`` if it has ended."""
    return move(
        repos,
        application,
        event,
        at=at,
        changes={"requested": request, "requested_at": at, "requested_by": actor.name},
        note=(f"{request}-requested", f"{request} requested by {actor.name}"),
    )


def _retried(change: Callable[[], ApplicationRecord]) -> ApplicationRecord:
    """``change`` (one transaction that reads what it changes), run again after another change
    lands between its read and its write, or the database rolls it back for contention."""
    return retried_on_contention(lambda: on_fresh_reads(change))
