"""Streaming jobs in the store, with optimistic concurrency (see ``VersionedRepository``).

Every job row carries a ``version``; a change based on an older one is a ``Conflict``. Tags are
copied out of the manifest into ``job_tags`` so lists can filter on them.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import (
    Row,
    Select,
    Text,
    bindparam,
    cast,
    delete,
    func,
    insert,
    select,
    update,
)

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import VersionedRepository
from streamjobs.store.job_statements import (
    ALL_JOBS,
    JobFilters,
    job_named,
    jobs_count,
    jobs_page,
)
from streamjobs.store.latest_runs import LatestRun, latest_run_of
from streamjobs.store.tables import JobRow, JobTagRow


@dataclass(frozen=True)
class JobRecord:
    """A job as stored: the validated manifest plus the store's bookkeeping."""

    id: str
    name: str
    namespace: str
    description: str | None
    bundle: str
    manifest: dict[str, Any]
    tags: dict[str, str]
    desired_state: str
    status: str
    version: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime


class JobRepository(VersionedRepository):
    """Adds, reads, lists, changes and deletes jobs."""

    _table = JobRow
    _kind = "job"

    def add(
        self,
        *,
        name: str,
        namespace: str,
        description: str | None,
        bundle: str,
        manifest: dict[str, Any],
        tags: dict[str, str],
        actor: str,
        at: datetime,
    ) -> JobRecord:
        """Store a new job at version 1; ``AlreadyExists`` if the name is taken."""
        if self.find(name) is not None:
            raise AlreadyExists("job", name)
        row = JobRow(
            id=str(uuid4()),
            name=name,
            namespace=namespace,
            description=description,
            bundle=bundle,
            manifest=manifest,
            created_by=actor,
            created_at=at,
            updated_by=actor,
            updated_at=at,
        )
        self._insert_unique(row, kind="job", name=name)
        self._insert_tags(row.id, tags)
        return self.get(name)

    def get(self, name: str) -> JobRecord:
        """The job called ``name``; ``NotFound`` if there is none."""
        job = self.find(name)
        if job is None:
            raise NotFound("job", name)
        return job

    def bundle_of(self, name: str) -> str:
        """The bundle of the job called ``name`` (all an access check needs: no manifest, no
        tags); ``NotFound`` if there is none."""
        bundle = self._read(_SELECT_BUNDLE, {"name": name}).scalar()
        if bundle is None:
            raise NotFound("job", name)
        return str(bundle)

    def find(self, name: str) -> JobRecord | None:
        """The job called ``name``, or None."""
        row = self._read(_SELECT_JOB, {"name": name}).one_or_none()
        return None if row is None else _record(row)

    def show(self, name: str) -> tuple[JobRecord, LatestRun | None]:
        """The job called ``name`` and its newest application (None before its first run);
        ``NotFound`` if there is no such job."""
        row = self._read(_SELECT_JOB_WITH_LATEST_RUN, {"name": name}).one_or_none()
        if row is None:
            raise NotFound("job", name)
        return _record(row), latest_run_of(row)

    def list(
        self, filters: JobFilters = ALL_JOBS, *, limit: int = 50, offset: int = 0
    ) -> tuple[builtins.list[JobRecord], int]:
        """One page of the jobs that pass ``filters``, by name, and how many pass in all."""
        rows, total = self._page(filters, limit=limit, offset=offset, latest_run=False)
        return [_record(row) for row in rows], total

    def list_with_latest(
        self, filters: JobFilters = ALL_JOBS, *, limit: int = 50, offset: int = 0
    ) -> tuple[builtins.list[tuple[JobRecord, LatestRun | None]], int]:
        """``list``, each job with its newest application (None for a job never run)."""
        rows, total = self._page(filters, limit=limit, offset=offset, latest_run=True)
        return [(_record(row), latest_run_of(row)) for row in rows], total

    def _page(
        self, filters: JobFilters, *, limit: int, offset: int, latest_run: bool
    ) -> tuple[Sequence[Row[Any]], int]:
        """The rows of one page and the count of all that pass ``filters``, in one statement
        unless the page is empty past the first (then the count is read on its own)."""
        values = filters.values()
        page = jobs_page(filters.given, latest_run=latest_run)
        rows = self._read(page, {**values, "limit": limit, "offset": offset}).all()
        if rows:
            return rows, int(rows[0].total)
        if offset == 0:
            return rows, 0
        return rows, int(self._read(jobs_count(filters.given), values).scalar_one())

    def count_in_bundle(self, bundle: str) -> int:
        counted = select(func.count()).select_from(JobRow).where(JobRow.bundle == bundle)
        return self._session.scalar(counted) or 0

    def lock(self, name: str) -> None:
        """Hold the job's row until this transaction ends, so that Run, Delete and apply of one
        job take turns; ``NotFound`` if there is no such job (or it was deleted meanwhile).

        A write that changes nothing: on PostgreSQL it takes the row lock (and, waiting for a
        deleter, sees the row gone), on SQLite it begins the transaction's write lock. Take it
        before any other row of the transaction (a bundle's or an application's included),
        always in that order."""
        if not self.hold(name):
            raise NotFound("job", name)

    def locked(self, name: str) -> JobRecord | None:
        """The job called ``name``, its row held as ``lock`` holds it; None if there is none."""
        return self.find(name) if self.hold(name) else None

    def hold(self, name: str) -> bool:
        """Hold the job's row as ``lock`` does; whether there is such a job."""
        statement = update(JobRow).where(JobRow.name == name).values(name=JobRow.name)
        return self._rows_changed(statement) > 0

    def set_status(self, name: str, status: str) -> None:
        """Record the job's status (its latest application's state); the version stays, as the
        status is the server's, not part of the manifest. Nothing happens for a deleted job."""
        self._session.execute(update(JobRow).where(JobRow.name == name).values(status=status))

    def manifests_mentioning(self, text: str) -> dict[str, dict[str, Any]]:
        """The manifests of the jobs whose stored JSON contains ``text``, by job name.

        A coarse, fast filter (a substring of the JSON text, e.g. ``"kafka-main:``); callers
        decide exactly which of the jobs it finds they are after.
        """
        found = self._session.execute(
            select(JobRow.name, JobRow.manifest)
            .where(cast(JobRow.manifest, Text).contains(text, autoescape=True))
            .order_by(JobRow.name)
        )
        return {name: copy.deepcopy(manifest) for name, manifest in found}

    def update(
        self,
        name: str,
        *,
        expected_version: int,
        manifest: dict[str, Any],
        description: str | None,
        bundle: str,
        tags: dict[str, str],
        actor: str,
        at: datetime,
    ) -> JobRecord:
        """Replace the job's manifest, description, bundle and tags, and bump its version.

        ``Conflict`` if the job is no longer at ``expected_version``; ``NotFound`` if it is gone.
        """
        job = self.get(name)
        self._update_versioned(
            job.id,
            name,
            expected_version=expected_version,
            manifest=manifest,
            description=description,
            bundle=bundle,
            updated_by=actor,
            updated_at=at,
        )
        self._session.execute(delete(JobTagRow).where(JobTagRow.job_id == job.id))
        self._insert_tags(job.id, tags)
        return self.get(name)

    def delete(self, name: str, *, expected_version: int | None = None) -> None:
        """Delete the job and its tags; with ``expected_version``, only if still at that version."""
        job = self.get(name)
        self._delete_versioned(job.id, name, expected_version)

    def _insert_tags(self, job_id: str, tags: dict[str, str]) -> None:
        if tags:
            rows = [{"job_id": job_id, "key": key, "value": value} for key, value in tags.items()]
            self._session.execute(insert(JobTagRow), rows)


_SELECT_JOB = job_named(latest_run=False)
"""The job of the bound ``name`` with its tags. Built once (statements are immutable; building
one costs about what running it does), like the one below."""
_SELECT_JOB_WITH_LATEST_RUN = job_named(latest_run=True)
_RECORD_FIELDS = [each.name for each in fields(JobRecord) if each.name != "tags"]
_SELECT_BUNDLE: Select[Any] = select(JobRow.bundle).where(JobRow.name == bindparam("name"))


def _record(row: Row[Any]) -> JobRecord:
    """The record of a row of ``jobs_page`` or ``job_named``, filled in directly rather than
    through the frozen dataclass's ``__init__`` (one ``object.__setattr__`` a field: most of a
    list's Python time)."""
    record: JobRecord = object.__new__(JobRecord)
    columns = row._mapping
    values = record.__dict__
    values.update((name, columns[name]) for name in _RECORD_FIELDS)
    values["tags"] = dict(sorted(row.tags.items())) if row.tags else {}
    return record
