"""Writing a job's row: every check and record that comes with creating or changing a job.

``JobService`` decides what a create, an apply or an update does (parsing, concurrency, the
transaction); this writes it, in the caller's transaction: the actor's permissions (to create
in the bundle, configure the job, move it to another bundle, run it as its ``runAs``), the job's
row, what the job refers to (checked after the row is written, see ``jobs``) and the locations
it claims, and the audit record.
"""

from __future__ import annotations

from typing import Any

from streamjobs.domain.access import (
    Actor,
    JobAction,
    JobRef,
    require_create_job,
    require_move_to_bundle,
)
from streamjobs.domain.clock import Clock
from streamjobs.domain.spec import StreamingJob
from streamjobs.services.access import grants_for, require_job
from streamjobs.services.job_references import ServerPlaces, check_references, check_run_as
from streamjobs.services.location_claims import claim_locations
from streamjobs.services.resources import audit, stored_form
from streamjobs.store.db import Repositories
from streamjobs.store.jobs import JobRecord


class JobChanges:
    """Adds and replaces jobs' rows on behalf of an actor, checking what each change needs."""

    def __init__(self, *, clock: Clock, checkpoint_root: str, places: ServerPlaces) -> None:
        self._clock = clock
        self._checkpoint_root = checkpoint_root
        self._places = places

    def add(self, job: StreamingJob, repos: Repositories, *, actor: Actor) -> JobRecord:
        """Store ``job`` as a new job of ``actor``'s."""
        require_create_job(actor.principal, grants_for(repos, actor), job.spec.bundle)
        check_run_as(repos, actor, job.spec.run_as, previous=None)
        record = repos.jobs.add(
            name=job.metadata.name,
            namespace=job.metadata.namespace,
            description=job.metadata.description,
            bundle=job.spec.bundle,
            manifest=stored_form(job),
            tags=dict(job.metadata.tags),
            actor=actor.name,
            at=self._clock.now(),
        )
        self._check_and_claim(job, repos, actor=actor)
        self._audit(repos, actor, "job.created", record.name, {"version": record.version})
        return record

    def replace(
        self,
        current: JobRecord,
        job: StreamingJob,
        repos: Repositories,
        *,
        actor: Actor,
        version: int,
    ) -> JobRecord:
        """Make the stored job ``current`` into ``job``, if it is still at ``version``."""
        require_job(repos, actor, current.name, current.bundle, JobAction.CONFIGURE)
        require_move_to_bundle(
            actor.principal,
            grants_for(repos, actor),
            JobRef(current.name, current.bundle),
            job.spec.bundle,
        )
        check_run_as(repos, actor, job.spec.run_as, previous=current.manifest["spec"].get("runAs"))
        record = repos.jobs.update(
            current.name,
            expected_version=version,
            manifest=stored_form(job),
            description=job.metadata.description,
            bundle=job.spec.bundle,
            tags=dict(job.metadata.tags),
            actor=actor.name,
            at=self._clock.now(),
        )
        self._check_and_claim(job, repos, actor=actor)
        self._audit(repos, actor, "job.configured", record.name, {"version": record.version})
        return record

    def unchanged(
        self,
        current: JobRecord,
        job: StreamingJob,
        repos: Repositories,
        actor: Actor,
        *,
        lock_connections: bool,
    ) -> bool:
        """Whether ``job`` is the job as stored, ``current``; ``actor`` must be allowed to configure
        it, and what it refers to must still exist, either way or not. Its locations and Spark
        settings were checked against its bundle when it was stored, and are again at each launch,
        so the commonest apply (the same manifest again) does not resolve them once more."""
        require_job(repos, actor, current.name, current.bundle, JobAction.CONFIGURE)
        if current.manifest != stored_form(job):
            return False
        check_references(
            job,
            repos,
            places=self._places,
            source=None,
            lock_connections=lock_connections,
            bundle_rules=False,
        )
        return True

    def _check_and_claim(self, job: StreamingJob, repos: Repositories, *, actor: Actor) -> None:
        """What the job refers to, and the locations it claims (written after the job's row,
        so on SQLite no other writer runs in between)."""
        locations = check_references(job, repos, places=self._places, source=None)
        claim_locations(job, locations, repos, actor=actor, checkpoint_root=self._checkpoint_root)

    def _audit(
        self, repos: Repositories, actor: Actor, action: str, name: str, detail: dict[str, Any]
    ) -> None:
        audit(repos, self._clock, actor, action, kind="job", name=name, detail=detail)
