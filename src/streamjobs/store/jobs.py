"""Streaming jobs in the store, with optimistic concurrency (see ``VersionedRepository``).

Every job row carries a ``version``; a change based on an older one is a ``Conflict``. Tags are
copied out of the manifest into ``job_tags`` so lists can filter on them.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import (
    ColumnElement,
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
from streamjobs.store.tables import JobRow, JobTagRow

TagFilter = tuple[str, str | None]
"""``(key, value)`` matches jobs tagged ``key: value``; ``(key, None)`` any job with that key."""


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
        row = self._read(_SELECT_JOBS.where(JobRow.name == name)).one_or_none()
        return None if row is None else self._records([row])[0]

    def list(
        self,
        *,
        status: str | None = None,
        tag: TagFilter | None = None,
        bundle: str | None = None,
        search: str | None = None,
        bundles: Collection[str] | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[builtins.list[JobRecord], int]:
        """One page of the jobs that pass every given filter, by name, and how many pass in all.

        ``search`` matches any part of the name, ignoring case; ``bundles``, when given, keeps
        only the jobs of those bundles (the ones the caller may see).
        """
        criteria = _criteria(status=status, tag=tag, bundle=bundle, search=search)
        if bundles is not None:
            criteria.append(JobRow.bundle.in_(sorted(bundles)))
        total = self._read(select(func.count()).select_from(JobRow).where(*criteria)).scalar_one()
        page = _SELECT_JOBS.where(*criteria).order_by(JobRow.name).limit(limit).offset(offset)
        return self._records(self._read(page).all()), int(total)

    def count_in_bundle(self, bundle: str) -> int:
        counted = select(func.count()).select_from(JobRow).where(JobRow.bundle == bundle)
        return self._session.scalar(counted) or 0

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

    def _records(self, rows: Sequence[Row[Any]]) -> builtins.list[JobRecord]:
        """Records of ``rows``, with the tags of all of them read in one query."""
        tags: dict[str, dict[str, str]] = {row.id: {} for row in rows}
        if not tags:
            return []
        found = self._read(_SELECT_TAGS, {"job_ids": builtins.list(tags)}).all()
        for job_id, key, value in found:
            tags[job_id][key] = value
        return [_record(row, tags[row.id]) for row in rows]


_SELECT_JOBS: Select[Any] = select(JobRow.__table__)
"""Jobs' columns as plain rows, not ORM objects: faster to read, always as stored now, and each
query decodes the manifest afresh, so no two records share it. Built once (statements are
immutable; building one costs about what running it does)."""
_SELECT_TAGS: Select[str, str, str] = (
    select(JobTagRow.job_id, JobTagRow.key, JobTagRow.value)
    .where(JobTagRow.job_id.in_(bindparam("job_ids", expanding=True)))
    .order_by(JobTagRow.key)
)
_RECORD_FIELDS = [each.name for each in fields(JobRecord) if each.name != "tags"]
_SELECT_BUNDLE: Select[Any] = select(JobRow.bundle).where(JobRow.name == bindparam("name"))


def _criteria(
    *, status: str | None, tag: TagFilter | None, bundle: str | None, search: str | None
) -> builtins.list[ColumnElement[bool]]:
    criteria: builtins.list[ColumnElement[bool]] = []
    if status is not None:
        criteria.append(JobRow.status == status)
    if bundle is not None:
        criteria.append(JobRow.bundle == bundle)
    if search:
        criteria.append(JobRow.name.icontains(search, autoescape=True))
    if tag is not None:
        criteria.append(_has_tag(*tag))
    return criteria


def _has_tag(key: str, value: str | None) -> ColumnElement[bool]:
    tagged = select(JobTagRow.job_id).where(JobTagRow.job_id == JobRow.id, JobTagRow.key == key)
    if value is not None:
        tagged = tagged.where(JobTagRow.value == value)
    return tagged.exists()


def _record(row: Row[Any], tags: dict[str, str]) -> JobRecord:
    """The record of a row of ``_SELECT_JOBS``, filled in directly rather than through the frozen
    dataclass's ``__init__`` (one ``object.__setattr__`` a field: most of a list's Python time)."""
    record: JobRecord = object.__new__(JobRecord)
    columns = row._mapping
    values = record.__dict__
    values.update((name, columns[name]) for name in _RECORD_FIELDS)
    values["tags"] = tags
    return record
