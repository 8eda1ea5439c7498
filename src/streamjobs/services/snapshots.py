"""The snapshot use cases: list, read, take and delete a job's snapshots, and what the supervisor
and Run need of them (requests to deliver, collection, expiry, a start from one).

Snapshots are a pipeline's: the server knows only a pipeline's checkpoint. Taking one on demand
records a TAKING row for the job's RUNNING application; the supervisor delivers the request to
the driver, and collects what the runner stages (``snapshot_collection``). A start from a
snapshot swaps the job's checkpoint for a copy of it (``snapshot_restore``). Every request is
audited in the transaction that makes it.
"""

from __future__ import annotations

import builtins
import logging
from datetime import datetime, timedelta
from pathlib import Path

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput
from streamjobs.domain.manifest import Guarantee, StreamingJob
from streamjobs.domain.snapshots import (
    SnapshotKind,
    SnapshotRequest,
    SnapshotStatus,
    automatic_name,
)
from streamjobs.domain.spec import parse_manifest
from streamjobs.domain.states import AppState
from streamjobs.services.access import require_job
from streamjobs.services.resources import audit
from streamjobs.services.snapshot_collection import SnapshotCollector, snapshot_name_error
from streamjobs.services.snapshot_files import remove_kept
from streamjobs.services.snapshot_restore import (
    RestoreResult,
    local_checkpoint,
    restore,
    set_aside,
)
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.snapshots import SnapshotRecord

_ANSWERING_STATES = frozenset({AppState.RUNNING, AppState.TERMINATING})
"""The states in which an application's driver may still hand over a snapshot asked of it."""
_log = logging.getLogger(__name__)

__all__ = ["RestoreResult", "SnapshotService"]


class SnapshotService:
    """Snapshots of jobs' checkpoints, on behalf of an actor or of the server."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        snapshot_root: Path,
        apps_directory: Path,
        checkpoint_root: str,
        request_timeout: float = 600.0,
    ) -> None:
        """``snapshot_root``: where snapshots are kept (no job can reach it);
        ``apps_directory``: where attempts' directories are (``<apps>/<application>/<n>/``);
        ``request_timeout``: seconds a snapshot asked for may take before it is failed."""
        self._store = store
        self._clock = clock
        self._root = snapshot_root
        self._checkpoint_root = checkpoint_root
        self._request_timeout = timedelta(seconds=request_timeout)
        self._collector = SnapshotCollector(
            store=store,
            clock=clock,
            snapshot_root=snapshot_root,
            apps_directory=apps_directory,
            checkpoint_root=checkpoint_root,
        )

    def list(self, job_name: str, *, actor: Actor) -> builtins.list[SnapshotRecord]:
        """The job's snapshots, newest first."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            return repos.snapshots.list(job_name)

    def get(self, job_name: str, name: str, *, actor: Actor) -> SnapshotRecord:
        """The job's snapshot ``name``; ``NotFound`` if it has none of that name."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            return repos.snapshots.get(job_name, name)

    def take(self, job_name: str, *, name: str | None, actor: Actor) -> SnapshotRecord:
        """Ask for a snapshot of the job's RUNNING application now (named ``name``, or
        ``manual-<time>``); the TAKING row. ``Conflict`` when the job is not a pipeline, keeps
        no checkpoint, has no RUNNING application or has a snapshot of that name;
        ``InvalidInput`` (field ``name``) for a name that is not a snapshot name."""
        if name is not None:
            problem = snapshot_name_error(name)
            if problem is not None:
                raise InvalidInput([FieldError("name", problem)])
        return retried_on_contention(lambda: self._take(job_name, name, actor))

    def _take(self, job_name: str, name: str | None, actor: Actor) -> SnapshotRecord:
        now = self._clock.now()
        name = name or automatic_name(SnapshotKind.MANUAL, now)
        with self._store.transaction() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.SNAPSHOT)
            self._require_snapshots(self._parsed(job.manifest), job_name)
            live = repos.applications.live_for_job(job_name)
            if live is None or live.state is not AppState.RUNNING:
                state = f" (its application {live.name} is {live.state})" if live else ""
                raise Conflict(
                    f"job {job_name!r} has no RUNNING application{state}: a snapshot is taken "
                    "of a running pipeline"
                )
            self._require_snapshots(self._parsed(repos.applications.spec(live.id)), job_name)
            if repos.snapshots.find(job_name, name) is not None:
                raise Conflict(f"job {job_name!r} has a snapshot named {name!r} already")
            snapshot = repos.snapshots.add(
                job_name=job_name,
                name=name,
                kind=SnapshotKind.MANUAL,
                status=SnapshotStatus.TAKING,
                application_id=live.id,
                spec_version=live.job_version,
                requested_at=now,
                requested_by=actor.name,
            )
            audit(
                repos,
                self._clock,
                actor,
                "job.snapshot",
                kind="job",
                name=job_name,
                detail={"snapshot": name, "application": live.id},
            )
            return snapshot

    def delete(self, job_name: str, name: str, *, actor: Actor) -> None:
        """Delete the job's snapshot ``name``, its record and its files; ``Conflict`` while it
        is being taken."""
        directory = retried_on_contention(lambda: self._delete(job_name, name, actor))
        remove_kept(self._root, directory)

    def _delete(self, job_name: str, name: str, actor: Actor) -> str | None:
        with self._store.transaction() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.CONFIGURE)
            snapshot = repos.snapshots.get(job_name, name)
            if snapshot.status is SnapshotStatus.TAKING:
                raise Conflict(
                    f"snapshot {name!r} of job {job_name!r} is being taken; delete it once it "
                    "is READY or FAILED"
                )
            repos.snapshots.delete(snapshot.id)
            audit(
                repos,
                self._clock,
                actor,
                "job.snapshot.delete",
                kind="job",
                name=job_name,
                detail={"snapshot": name, "kind": str(snapshot.kind)},
            )
            return snapshot.directory

    def pending_requests(self) -> builtins.list[tuple[SnapshotRecord, ApplicationRecord]]:
        """The snapshots people asked for (TAKING, manual) of RUNNING applications, each with
        its application, oldest first: what the supervisor delivers to the drivers."""
        with self._store.reading() as repos:
            pending = []
            for snapshot in repos.snapshots.taking():
                if snapshot.kind is not SnapshotKind.MANUAL or snapshot.application_id is None:
                    continue
                application = repos.applications.find(snapshot.application_id)
                if application is not None and application.state is AppState.RUNNING:
                    pending.append((snapshot, application))
            return pending

    def expect(self, application_id: str, request: SnapshotRequest) -> None:
        """Record that the application's driver will hand over the snapshot ``request`` (one
        at a graceful stop or suspend), unless the job has one of that name already."""

        def once() -> None:
            with self._store.transaction() as repos:
                application = repos.applications.get(application_id)
                if repos.snapshots.find(application.job_name, request.name) is not None:
                    return
                repos.snapshots.add(
                    job_name=application.job_name,
                    name=request.name,
                    kind=request.kind,
                    status=SnapshotStatus.TAKING,
                    application_id=application.id,
                    spec_version=application.job_version,
                    requested_at=self._clock.now(),
                    requested_by=application.requested_by,
                )

        retried_on_contention(once)

    def collect(self, application_id: str) -> builtins.list[SnapshotRecord]:
        """Collect every snapshot the application's runner staged (``snapshot_collection``);
        the rows that became READY or FAILED."""
        return self._collector.collect(application_id)

    def expire(self) -> builtins.list[SnapshotRecord]:
        """Fail the TAKING snapshots that will not be handed over: their application is gone
        or no longer RUNNING or TERMINATING, or they were asked for longer than the request
        timeout ago. Call it after a last ``collect`` of the applications that ended."""
        return retried_on_contention(self._expire)

    def _expire(self) -> builtins.list[SnapshotRecord]:
        now = self._clock.now()
        expired = []
        with self._store.transaction() as repos:
            for snapshot in repos.snapshots.taking():
                application = (
                    repos.applications.find(snapshot.application_id)
                    if snapshot.application_id
                    else None
                )
                reason = self._expiry(snapshot, application, now)
                if reason is None:
                    continue
                failed = repos.snapshots.finish_taking(
                    snapshot.id, status=SnapshotStatus.FAILED, error=reason
                )
                if failed is None:
                    continue
                expired.append(failed)
                if application is not None:
                    repos.applications.add_event(
                        application.id,
                        at=now,
                        kind="snapshot-failed",
                        message=f"snapshot {snapshot.name}: {reason}",
                    )
        return expired

    def _expiry(
        self, snapshot: SnapshotRecord, application: ApplicationRecord | None, now: datetime
    ) -> str | None:
        """Why a TAKING snapshot will not be handed over; None while it still may be."""
        if application is None:
            return "its application is gone"
        if application.state not in _ANSWERING_STATES:
            return (
                f"its application {application.name} is {application.state}: the driver "
                "ended without handing it over"
            )
        if now - snapshot.requested_at > self._request_timeout:
            seconds = round(self._request_timeout.total_seconds())
            return f"the driver did not hand it over within {seconds} seconds"
        return None

    def restore(
        self,
        repos: Repositories,
        job_name: str,
        name: str,
        *,
        allow_replay: bool,
        actor: Actor,
        at: datetime,
    ) -> RestoreResult:
        """Put a copy of the job's snapshot ``name`` in place of its checkpoint, in Run's
        transaction (``repos``) after its live-application check: ``NotFound`` for a snapshot
        the job does not have, ``Conflict`` for one not READY, or older than an output's
        position (naming each) unless ``allow_replay``. The checkpoint it replaces, when it
        holds anything, is kept as a snapshot of kind ``replaced``."""
        job = repos.jobs.get(job_name)
        require_job(repos, actor, job.name, job.bundle, JobAction.RUN)
        return restore(
            repos,
            self._parsed(job.manifest),
            name,
            snapshot_root=self._root,
            checkpoint_root=self._checkpoint_root,
            allow_replay=allow_replay,
            actor=actor.name,
            at=at,
        )

    def set_aside(
        self, repos: Repositories, job_name: str, *, actor: Actor, at: datetime
    ) -> SnapshotRecord | None:
        """Move the job's checkpoint aside as a snapshot of kind ``replaced`` (when it holds
        anything), in a start's transaction (``repos``) after its live-application check, so
        the job starts on a fresh checkpoint; the snapshot, or None."""
        job = repos.jobs.get(job_name)
        require_job(repos, actor, job.name, job.bundle, JobAction.RUN)
        return set_aside(
            repos,
            self._parsed(job.manifest),
            snapshot_root=self._root,
            checkpoint_root=self._checkpoint_root,
            actor=actor.name,
            at=at,
        )

    def _parsed(self, manifest: dict[str, object]) -> StreamingJob:
        return parse_manifest(manifest, checkpoint_root=self._checkpoint_root)

    def _require_snapshots(self, job: StreamingJob, job_name: str) -> None:
        """``Conflict`` unless ``job`` is a streaming pipeline keeping a checkpoint on this
        machine."""
        pipeline = job.spec.pipeline
        if pipeline is None:
            raise Conflict(
                f"job {job_name!r} is not a pipeline: snapshots are taken of a pipeline's "
                "checkpoint, and a python or jvm application's checkpoints are its own"
            )
        if pipeline.batch_mode or job.spec.processing.guarantee is Guarantee.NONE:
            raise Conflict(
                f"job {job_name!r} keeps no checkpoint (guarantee NONE or batchMode), so it has "
                "no state to snapshot"
            )
        if local_checkpoint(job, self._checkpoint_root) is None:
            raise Conflict(
                f"job {job_name!r} checkpoints off this machine: snapshots are taken of "
                "checkpoints on the server's machine"
            )
