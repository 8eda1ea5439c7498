"""The job use cases: create, apply, update, duplicate, delete, list and show streaming jobs.

The REST API and the web UI both call these, so each rule lives here once: the manifest's own rules
(``domain.spec``) plus those only the store can check (the bundle, node types and the connections
of its datasets exist, and the connections fit the formats; the bundle allows its Spark settings
and its locations; no other job claims them), optimistic concurrency, and an audit record for
every change, written in the same transaction as the change.

A change writes the job first and checks what it refers to afterwards, in the same transaction,
reading the connections locked for share: then a connection deleted or retyped at the same time
either waits for the job (and sees it) or is seen gone by it, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json_merge_patch

from streamjobs.domain.access import (
    Actor,
    JobAction,
    Permission,
)
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import (
    StreamingJob,
    parse_manifest,
    resolved_template,
    split_server_fields,
)
from streamjobs.services.access import allowed_actions, require_job, visible_to
from streamjobs.services.checkpoint_state import resumed_state_warning
from streamjobs.services.job_changes import JobChanges
from streamjobs.services.job_deletion import ABORT_WAIT_SECONDS, DeletedJob, JobDeletion
from streamjobs.services.job_documents import job_document
from streamjobs.services.job_references import (
    ServerPlaces,
    check_references,
    node_types_of,
)
from streamjobs.services.resources import (
    ApplyOutcome,
    Page,
    check_page,
    decided_on_content,
    require_same_name,
    tag_filter,
)
from streamjobs.store import JobFilters, LatestRun
from streamjobs.store.db import Repositories, Store
from streamjobs.store.jobs import JobRecord

__all__ = ["ApplyOutcome", "DeletedJob", "JobPage", "JobQuery", "JobService", "job_document"]

JobPage = Page[JobRecord]


@dataclass(frozen=True)
class JobQuery:
    """Which jobs to list: every filter is optional; ``tag`` is ``key`` or ``key=value``."""

    status: str | None = None
    tag: str | None = None
    bundle: str | None = None
    search: str | None = None
    limit: int = 50
    offset: int = 0


class JobService:
    """Creates, changes and reads streaming jobs on behalf of an actor."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        checkpoint_root: str,
        protected_roots: Sequence[str],
        abort_wait_seconds: float = ABORT_WAIT_SECONDS,
        snapshot_root: Path | None = None,
    ) -> None:
        """``protected_roots`` are locations no job may reach: the server's home, as a URI.
        ``abort_wait_seconds``: how long a Delete that aborts waits for the application to end.
        ``snapshot_root``: where the jobs' snapshots are kept, removed with a deleted job.
        """
        self._store = store
        self._deletion = JobDeletion(
            store=store,
            clock=clock,
            checkpoint_root=checkpoint_root,
            protected_roots=protected_roots,
            abort_wait_seconds=abort_wait_seconds,
            snapshot_root=snapshot_root,
        )
        self._checkpoint_root = checkpoint_root
        self._places = ServerPlaces(checkpoint_root, tuple(protected_roots))
        self._changes = JobChanges(
            clock=clock, checkpoint_root=checkpoint_root, places=self._places
        )

    @property
    def places(self) -> ServerPlaces:
        """The server's own places, which every job's locations are checked against."""
        return self._places

    def validate(self, document: Any, *, source: str | None = None) -> StreamingJob:
        """Check a manifest against every rule, including the ones that need the store.

        The fields the server owns (as ``get -o yaml`` prints them) are ignored, so a job read
        from the server can be edited and applied back.
        """
        job = self._parsed(document, source=source)
        with self._store.transaction() as repos:
            check_references(job, repos, places=self._places, source=source)
        return job

    def create(self, document: Any, *, actor: Actor) -> JobRecord:
        job = self._parsed(document)
        with self._store.transaction() as repos:
            return self._changes.add(job, repos, actor=actor)

    def apply(self, name: str, document: Any, *, actor: Actor) -> tuple[JobRecord, ApplyOutcome]:
        """Create the job, or bring it to the manifest; the same manifest twice changes nothing.

        Without a ``metadata.resourceVersion`` the outcome depends on the content alone, however
        many applies of the job run at once; with one, it must still be the job's version."""
        job = self._parsed(document)
        _require_same_name(name, job)
        _, expected_version = split_server_fields(document)
        return decided_on_content(
            lambda: self._apply(job, actor=actor, expected_version=expected_version),
            expected_version=expected_version,
        )

    def _apply(
        self, job: StreamingJob, *, actor: Actor, expected_version: int | None
    ) -> tuple[JobRecord, ApplyOutcome]:
        with self._store.transaction() as repos:
            current = repos.jobs.locked(job.metadata.name)
            if current is None:
                return self._changes.add(job, repos, actor=actor), ApplyOutcome.CREATED
            if self._changes.unchanged(current, job, repos, actor, lock_connections=True):
                return current, ApplyOutcome.UNCHANGED
            version = expected_version or current.version
            record = self._changes.replace(current, job, repos, actor=actor, version=version)
        return record, ApplyOutcome.CONFIGURED

    def unchanged_by(self, name: str, document: Any, *, actor: Actor) -> JobRecord | None:
        """The job as stored if applying ``document`` would leave it as it is; None if applying
        would create or change it. Raises what ``apply`` would: for a bad manifest, or an actor
        who may not configure the job.

        Only reads, so the API can answer the commonest apply (the same manifest again, as a
        GitOps loop sends it) without handing it to a worker thread.
        """
        job = self._parsed(document)
        _require_same_name(name, job)
        with self._store.reading() as repos:
            current = repos.jobs.find(name)
            if current is None or not self._changes.unchanged(
                current, job, repos, actor, lock_connections=False
            ):
                return None
            return current

    def update(
        self,
        name: str,
        patch: Mapping[str, Any],
        *,
        actor: Actor,
        expected_version: int | None = None,
    ) -> JobRecord:
        """Apply a JSON merge patch (RFC 7396) to the job's manifest; the name cannot change."""
        if not isinstance(patch, Mapping):
            raise InvalidInput([FieldError("", "a merge patch must be a JSON object")])
        return decided_on_content(
            lambda: self._update(name, patch, actor=actor, expected_version=expected_version),
            expected_version=expected_version,
        )

    def _update(
        self, name: str, patch: Mapping[str, Any], *, actor: Actor, expected_version: int | None
    ) -> JobRecord:
        current = self.get(name, actor=actor)
        merged = json_merge_patch.merge(copy.deepcopy(current.manifest), copy.deepcopy(patch))
        job = self._parsed(merged)
        _require_same_name(name, job)
        with self._store.transaction() as repos:
            version = expected_version or current.version
            return self._changes.replace(current, job, repos, actor=actor, version=version)

    def duplicate(self, name: str, *, new_name: str, actor: Actor) -> JobRecord:
        """Create a job named ``new_name`` with the same spec as ``name``."""
        manifest = copy.deepcopy(self.get(name, actor=actor).manifest)
        manifest["metadata"]["name"] = new_name
        return self.create(manifest, actor=actor)

    def delete(
        self,
        name: str,
        *,
        actor: Actor,
        expected_version: int | None = None,
        delete_checkpoint: bool = False,
    ) -> DeletedJob:
        """Delete the job, and its checkpoint with ``delete_checkpoint``; ``Conflict`` naming
        its live application while it has one."""
        return self._deletion.delete(
            name,
            actor=actor,
            expected_version=expected_version,
            delete_checkpoint=delete_checkpoint,
        )

    async def delete_aborting(
        self,
        name: str,
        *,
        actor: Actor,
        expected_version: int | None = None,
        delete_checkpoint: bool = False,
    ) -> DeletedJob:
        """Abort the job's live application first, and delete the job once it has ended (see
        ``JobDeletion.delete_aborting``); call it on the event loop."""
        return await self._deletion.delete_aborting(
            name,
            actor=actor,
            expected_version=expected_version,
            delete_checkpoint=delete_checkpoint,
        )

    def resumed_state_warnings(self, record: JobRecord) -> list[str]:
        """What to tell whoever just created the job ``record``: that its checkpoint already
        holds a stream's state, when it does (its first run would resume from it)."""
        job = parse_manifest(record.manifest, checkpoint_root=self._checkpoint_root)
        warning = resumed_state_warning(job, self._checkpoint_root)
        return [warning] if warning is not None else []

    def exists(self, name: str) -> bool:
        with self._store.reading() as repos:
            return repos.jobs.find(name) is not None

    def get(self, name: str, *, actor: Actor) -> JobRecord:
        """The job; ``NotFound`` also when ``actor`` may not see it."""
        with self._store.reading() as repos:
            record = repos.jobs.get(name)
            require_job(repos, actor, name, record.bundle, JobAction.VIEW)
            return record

    def show(self, name: str, *, actor: Actor) -> tuple[JobRecord, LatestRun | None]:
        """The job and its latest application (None before its first run), read in one
        transaction; ``NotFound`` also when ``actor`` may not see the job."""
        with self._store.reading() as repos:
            record, latest = repos.jobs.show(name)
            require_job(repos, actor, name, record.bundle, JobAction.VIEW)
            return record, latest

    def permissions(self, name: str, *, actor: Actor) -> dict[JobAction, Permission | None]:
        """For each action on the job, None if ``actor`` may take it, else the permission
        missing; ``NotFound`` when they may not see the job."""
        with self._store.reading() as repos:
            record = repos.jobs.get(name)
            require_job(repos, actor, name, record.bundle, JobAction.VIEW)
            return allowed_actions(repos, actor, name, record.bundle)

    def list(self, query: JobQuery, *, actor: Actor) -> JobPage:
        """The jobs ``actor`` may see that pass the query's filters."""
        check_page(query.limit, query.offset)
        with self._store.reading() as repos:
            filters = _job_filters(query, repos, actor)
            items, total = repos.jobs.list(filters, limit=query.limit, offset=query.offset)
        return JobPage(items=items, total=total, limit=query.limit, offset=query.offset)

    def list_with_latest(
        self, query: JobQuery, *, actor: Actor
    ) -> tuple[JobPage, dict[str, LatestRun]]:
        """``list``, and the latest application of each job on the page that has run, by job
        name, read in the same statement."""
        check_page(query.limit, query.offset)
        with self._store.reading() as repos:
            filters = _job_filters(query, repos, actor)
            rows, total = repos.jobs.list_with_latest(
                filters, limit=query.limit, offset=query.offset
            )
        items = [record for record, _ in rows]
        page = JobPage(items=items, total=total, limit=query.limit, offset=query.offset)
        return page, {record.name: latest for record, latest in rows if latest is not None}

    def template(self, name: str, *, actor: Actor) -> dict[str, Any]:
        """The job's full template: every default filled in, secrets by name only."""
        record = self.get(name, actor=actor)
        job = parse_manifest(record.manifest, checkpoint_root=self._checkpoint_root)
        template = resolved_template(job, checkpoint_root=self._checkpoint_root)
        with self._store.reading() as repos:
            template["resolved"] = {"nodeTypes": node_types_of(job, repos)}
        return template

    def _parsed(self, document: Any, *, source: str | None = None) -> StreamingJob:
        """The manifest's own rules; the fields the server owns (as printed) are ignored."""
        manifest, _ = split_server_fields(document)
        return parse_manifest(manifest, checkpoint_root=self._checkpoint_root, source=source)


def _require_same_name(name: str, job: StreamingJob) -> None:
    require_same_name(
        "job", name, job.metadata.name, instead="duplicate the job to copy it under a new name"
    )


def _job_filters(query: JobQuery, repos: Repositories, actor: Actor) -> JobFilters:
    """The jobs ``query`` asks for, as far as ``actor`` may see."""
    return JobFilters(
        status=query.status,
        tag=tag_filter(query.tag) if query.tag else None,
        bundle=query.bundle,
        search=query.search,
        bundles=visible_to(repos, actor),
    )
