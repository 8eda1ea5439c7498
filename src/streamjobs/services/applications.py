"""The application use cases: Run, Stop, Resume and Abort, and reading applications back.

Run stores a new application in STARTING with an immutable snapshot of the job's resolved
template; the supervisor submits its driver at its next tick. Stop and Abort record the request
and move the application on through the state machine (TERMINATING while a driver may be up);
the supervisor carries them out. Every request is audited in the transaction that makes it, and
each is a whole transaction, run again when the database rolls it back for contention.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.deployment_rules import deployment_errors
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput, NotFound
from streamjobs.domain.jar_requests import JarRequest, jar_request
from streamjobs.domain.manifest import Deployment, StreamingJob
from streamjobs.domain.quotas import Demand, application_demand, check_quota
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import LIVE_STATES, AppEvent, AppState
from streamjobs.domain.throughput import Bucket
from streamjobs.services.access import require_job, visible_to
from streamjobs.services.application_state import created, move
from streamjobs.services.resources import Page, audit, check_page, on_fresh_reads, tag_filter
from streamjobs.services.run_checks import check_runnable, run_refusals
from streamjobs.store import (
    ApplicationEventRecord,
    ApplicationRecord,
    AttemptRecord,
    ProgressRecord,
)
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention

ApplicationPage = Page[ApplicationRecord]


@dataclass(frozen=True)
class ApplicationQuery:
    """Which applications to list; every filter is optional. ``tag`` is ``key`` or ``key=value``."""

    job_name: str | None = None
    status: str | None = None
    triggered_by: str | None = None
    tag: str | None = None
    search: str | None = None
    limit: int = 50
    offset: int = 0


@dataclass(frozen=True)
class ApplicationDetails:
    """An application with its attempts and its latest executor figures."""

    application: ApplicationRecord
    attempts: list[AttemptRecord]
    executors: dict[str, Any] | None


class ApplicationService:
    """Starts, stops and reads applications on behalf of an actor."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        checkpoint_root: str,
        jar_failures: Callable[[JarRequest], str | None] | None = None,
        deployments: Collection[Deployment] = tuple(Deployment),
    ) -> None:
        """``jar_failures`` tells how the latest resolution of a job's jars failed, if it did
        (``launch.jars``): Run and Resume refuse such a job rather than fail at its launch.
        ``deployments`` are those the server can launch (standard needs a standalone master)."""
        self._store = store
        self._clock = clock
        self._checkpoint_root = checkpoint_root
        self._jar_failures = jar_failures
        self._deployments = deployments

    def run(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        """Start a new application of the job; ``Conflict`` naming the live one if there is one.

        The job's row is held first, so a Delete of the job either waits for this Run (and sees
        its application) or has deleted the job already (``NotFound``): no application of a
        deleted job is ever stored."""
        return retried_on_contention(lambda: self._run(job_name, actor=actor))

    def _run(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        now = self._clock.now()
        with self._store.transaction() as repos:
            repos.jobs.lock(job_name)
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.RUN)
            spec = self._snapshot(repos, job.manifest)
            run_as = (spec["spec"].get("runAs")) or job.created_by
            demand = _reserve(repos, job.bundle, spec)
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
            )
            repos.jobs.set_status(job.name, str(AppState.STARTING))
            created(repos, application, at=now)
            repos.applications.add_event(
                application.id, at=now, kind="run-requested", message=f"run by {actor.name}"
            )
            self._audit(repos, actor, "job.run", job.name, {"application": application.id})
            return application

    def stop(self, job_name: str, *, actor: Actor) -> ApplicationRecord:
        """Stop the job's live application gracefully, after its micro-batch in flight."""
        return self._request(job_name, AppEvent.STOP_REQUESTED, "stop", actor=actor)

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
            demand = _reserve(repos, job.bundle, spec)
            resumed = move(
                repos,
                application,
                AppEvent.RESUMED,
                at=now,
                changes={
                    "spec": spec,
                    "cores": demand.cores,
                    "memory_mb": demand.memory_mb,
                    "submission_failures": 0,
                    "execution_failures": 0,
                    "error_message": None,
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

    def get(self, application_id: str, *, actor: Actor) -> ApplicationDetails:
        with self._store.reading() as repos:
            application = _visible(repos, actor, application_id)
            figures = repos.applications.executor_figures(application_id)
            return ApplicationDetails(
                application=application,
                attempts=repos.applications.attempts(application_id),
                executors=figures.figures if figures else None,
            )

    def list(self, query: ApplicationQuery, *, actor: Actor) -> ApplicationPage:
        """The applications of the jobs ``actor`` may see that pass the query's filters."""
        check_page(query.limit, query.offset)
        states = [_state(query.status)] if query.status else None
        tag = tag_filter(query.tag) if query.tag else None
        filters: dict[str, Any] = {
            "job_name": query.job_name,
            "states": states,
            "triggered_by": query.triggered_by,
            "tag": tag,
            "search": query.search,
        }
        with self._store.reading() as repos:
            filters["bundles"] = visible_to(repos, actor)
            if query.job_name is not None:
                bundle = repos.jobs.bundle_of(query.job_name)
                require_job(repos, actor, query.job_name, bundle, JobAction.VIEW)
            items, total = repos.applications.list(
                **filters, limit=query.limit, offset=query.offset
            )
        return ApplicationPage(items=items, total=total, limit=query.limit, offset=query.offset)

    def events(
        self,
        application_id: str,
        *,
        actor: Actor,
        after_id: int | None = None,
        before_id: int | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> builtins.list[ApplicationEventRecord]:
        with self._store.reading() as repos:
            _visible(repos, actor, application_id)
            return repos.applications.events(
                application_id,
                after_id=after_id,
                before_id=before_id,
                limit=limit,
                newest_first=newest_first,
            )

    def progress(
        self, application_id: str, *, actor: Actor, limit: int = 100
    ) -> builtins.list[ProgressRecord]:
        check_page(limit, 0)
        with self._store.reading() as repos:
            _visible(repos, actor, application_id)
            return repos.applications.progress(application_id, limit=limit)

    def throughput(
        self, application_id: str, *, actor: Actor, limit: int = 500
    ) -> tuple[builtins.list[ProgressRecord], builtins.list[Bucket]]:
        """The ``limit`` newest progress reports and the buckets of the application's whole
        life (``store.throughput``), read together: what its chart is drawn from."""
        check_page(limit, 0)
        with self._store.reading() as repos:
            _visible(repos, actor, application_id)
            progress = repos.applications.progress(application_id, limit=limit)
            return progress, repos.applications.throughput_buckets(application_id)

    def template(self, application_id: str, *, actor: Actor) -> dict[str, Any]:
        """The job exactly as this application runs it (its immutable snapshot)."""
        with self._store.reading() as repos:
            _visible(repos, actor, application_id)
            return repos.applications.spec(application_id)

    def run_refusal(self, job_name: str, *, actor: Actor) -> str | None:
        """Why a Run of the job would be refused for what it needs now, in words; None when it
        would not be. For its button: Run itself checks again."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            try:
                self._snapshot(repos, job.manifest)
            except (Conflict, InvalidInput) as refused:
                return refused.detail
        return None

    def _snapshot(self, repos: Repositories, manifest: dict[str, Any]) -> dict[str, Any]:
        """The job's resolved template, once nothing it needs is known to be missing."""
        job = parse_manifest(manifest, checkpoint_root=self._checkpoint_root)
        refusals = [*run_refusals(repos, job), *deployment_errors(job, self._deployments)]
        check_runnable([*refusals, *self._jar_refusals(job)], job.name)
        return resolved_template(job, checkpoint_root=self._checkpoint_root)

    def _jar_refusals(self, job: StreamingJob) -> builtins.list[FieldError]:
        """The package whose resolution failed lately (any of the job's when none is named)."""
        failure = self._jar_failures(jar_request(job)) if self._jar_failures else None
        if failure is None:
            return []
        packages = job.spec.dependencies.packages
        named = [index for index, package in enumerate(packages) if package in failure]
        path = f"spec.dependencies.packages[{named[0]}]" if named else "spec.dependencies"
        return [FieldError(path, f"resolving the job's jars failed: {failure}")]

    def _request(
        self, job_name: str, event: AppEvent, request: str, *, actor: Actor
    ) -> ApplicationRecord:
        return _retried(lambda: self._request_once(job_name, event, request, actor=actor))

    def _request_once(
        self, job_name: str, event: AppEvent, request: str, *, actor: Actor
    ) -> ApplicationRecord:
        with self._store.transaction() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.STOP)
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
    """Record ``actor``'s ``request`` ("stop" or "abort") of ``application`` and move it on by
    ``event``, for the supervisor to carry out; ``IllegalTransition`` if it has ended."""
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


def _visible(repos: Repositories, actor: Actor, application_id: str) -> ApplicationRecord:
    """The application, if ``actor`` may see its job; ``NotFound`` (naming the application)
    otherwise, so an application's existence is not disclosed either."""
    application = repos.applications.get(application_id)
    try:
        require_job(repos, actor, application.job_name, application.bundle, JobAction.VIEW)
    except NotFound:
        raise NotFound("application", application_id) from None
    return application


def _reserve(repos: Repositories, bundle: str, spec: dict[str, Any]) -> Demand:
    """What an application of ``spec`` takes, after checking it fits the bundle's quotas.

    The bundle is locked first, so concurrent Runs in one bundle are counted one after the
    other. Only running applications count (a suspended one being resumed does not yet).
    """
    repos.bundles.lock(bundle)
    instance = spec["spec"]["instance"]
    sizes = repos.node_types.sizes()
    standard = instance["deployment"] == "standard"
    for role in ("driver", "executor") if standard else ("driver",):
        if instance.get(role) not in sizes:
            raise Conflict(
                f"spec.instance.{role}: node type {instance.get(role)!r} no longer exists; "
                "configure the job with one that does"
            )
    demand = application_demand(
        driver=instance["driver"],
        executor=instance.get("executor") if standard else None,
        executors=instance.get("executors"),
        node_types=sizes,
    )
    check_quota(
        bundle, repos.bundles.get(bundle).quota, repos.applications.demand_in_bundle(bundle), demand
    )
    return demand


def _state(status: str) -> AppState:
    try:
        return AppState(status.upper())
    except ValueError:
        known = ", ".join(state.value for state in AppState)
        raise InvalidInput(
            [FieldError("query.status", f"{status!r} is not a state (known: {known})")]
        ) from None
