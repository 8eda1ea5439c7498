"""Snapshots of jobs' checkpoints in the store: what each one is, and where it is in its life.

A row is written when a snapshot is asked for (TAKING), or when the server collects one the
runner took on its own (a periodic one, one at a graceful stop); it becomes READY or FAILED once
collected. A job's snapshot names are unique: the database refuses a second row of one name, so
two collections of the same staged snapshot cannot both land. The copy itself lies under the
server's snapshot root, at the row's ``directory``; the services keep the two together.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import Select, delete, func, select, update

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.snapshots import OutputPosition, SnapshotKind, SnapshotStatus
from streamjobs.store.base import Repository
from streamjobs.store.snapshot_tables import SnapshotRow

CHANGEABLE_FIELDS = frozenset(
    {"status", "batches", "positions", "taken_at", "size_bytes", "error", "directory"}
)
"""What ``update`` may change: how the taking went. Its job, name and origin are fixed."""


@dataclass(frozen=True)
class SnapshotRecord:
    """A snapshot as stored."""

    id: str
    job_name: str
    name: str
    kind: SnapshotKind
    status: SnapshotStatus
    application_id: str | None
    """The application it was taken from (None once that application is gone)."""
    spec_version: int | None
    """The version of the job the application's spec came from."""
    batches: dict[str, int]
    """The last committed batch id of each query, by its checkpoint sub-directory."""
    positions: list[OutputPosition]
    requested_at: datetime
    taken_at: datetime | None
    size_bytes: int | None
    error: str | None
    requested_by: str | None
    directory: str | None
    """Where the copy lies, relative to the snapshot root (None until it is READY)."""


_COLUMNS = [
    SnapshotRow.id,
    SnapshotRow.job_name,
    SnapshotRow.name,
    SnapshotRow.kind,
    SnapshotRow.status,
    SnapshotRow.application_id,
    SnapshotRow.spec_version,
    SnapshotRow.batches,
    SnapshotRow.positions,
    SnapshotRow.requested_at,
    SnapshotRow.taken_at,
    SnapshotRow.size_bytes,
    SnapshotRow.error,
    SnapshotRow.requested_by,
    SnapshotRow.directory,
]
_SELECT: Select[Any] = select(*_COLUMNS)
_NEWEST_FIRST = (
    func.coalesce(SnapshotRow.taken_at, SnapshotRow.requested_at).desc(),
    SnapshotRow.requested_at.desc(),
    SnapshotRow.id.desc(),
)


class SnapshotRepository(Repository):
    """Adds, reads, changes and deletes snapshot rows."""

    def add(
        self,
        *,
        job_name: str,
        name: str,
        kind: SnapshotKind,
        status: SnapshotStatus,
        requested_at: datetime,
        application_id: str | None = None,
        spec_version: int | None = None,
        requested_by: str | None = None,
        batches: dict[str, int] | None = None,
        positions: Sequence[OutputPosition] = (),
        taken_at: datetime | None = None,
        size_bytes: int | None = None,
        error: str | None = None,
        directory: str | None = None,
        snapshot_id: str | None = None,
    ) -> SnapshotRecord:
        """Store a new snapshot of ``job_name`` (with the id ``snapshot_id``, when the caller
        chose it to name its directory); ``AlreadyExists`` when the job has one called ``name``
        already (another transaction's included)."""
        if self.find(job_name, name) is not None:
            raise AlreadyExists("snapshot", name)
        row = SnapshotRow(
            id=snapshot_id or str(uuid4()),
            job_name=job_name,
            name=name,
            kind=SnapshotKind(kind).value,
            status=SnapshotStatus(status).value,
            application_id=application_id,
            spec_version=spec_version,
            batches=dict(batches or {}),
            positions=[position.to_wire() for position in positions],
            requested_at=requested_at,
            taken_at=taken_at,
            size_bytes=size_bytes,
            error=error,
            requested_by=requested_by,
            directory=directory,
        )
        self._insert_unique(row, kind="snapshot", name=name)
        return self.by_id(row.id)

    def by_id(self, snapshot_id: str) -> SnapshotRecord:
        """The snapshot ``snapshot_id``; ``NotFound`` if there is none."""
        row = self._read(_SELECT.where(SnapshotRow.id == snapshot_id)).one_or_none()
        if row is None:
            raise NotFound("snapshot", snapshot_id)
        return _record(row)

    def find(self, job_name: str, name: str) -> SnapshotRecord | None:
        """The job's snapshot called ``name``, or None."""
        row = self._read(
            _SELECT.where(SnapshotRow.job_name == job_name, SnapshotRow.name == name)
        ).one_or_none()
        return None if row is None else _record(row)

    def get(self, job_name: str, name: str) -> SnapshotRecord:
        """The job's snapshot called ``name``; ``NotFound`` naming it if there is none."""
        found = self.find(job_name, name)
        if found is None:
            raise NotFound("snapshot", f"{job_name}/{name}")
        return found

    def list(
        self,
        job_name: str,
        *,
        statuses: Collection[SnapshotStatus] | None = None,
        kinds: Collection[SnapshotKind] | None = None,
    ) -> builtins.list[SnapshotRecord]:
        """The job's snapshots (of those statuses and kinds, when given), newest first."""
        statement = _SELECT.where(SnapshotRow.job_name == job_name)
        if statuses is not None:
            statement = statement.where(SnapshotRow.status.in_([s.value for s in statuses]))
        if kinds is not None:
            statement = statement.where(SnapshotRow.kind.in_([k.value for k in kinds]))
        return [_record(row) for row in self._read(statement.order_by(*_NEWEST_FIRST)).all()]

    def taking(self, *, application_id: str | None = None) -> builtins.list[SnapshotRecord]:
        """The snapshots asked for and not yet collected (of one application, when given),
        oldest first."""
        statement = _SELECT.where(SnapshotRow.status == SnapshotStatus.TAKING.value)
        if application_id is not None:
            statement = statement.where(SnapshotRow.application_id == application_id)
        ordered = statement.order_by(SnapshotRow.requested_at, SnapshotRow.id)
        return [_record(row) for row in self._read(ordered).all()]

    def update(self, snapshot_id: str, **changes: Any) -> SnapshotRecord:
        """Change the fields named in ``CHANGEABLE_FIELDS`` (``positions`` as OutputPositions);
        ``NotFound`` if the snapshot is gone, ``TypeError`` for a field that cannot change."""
        statement = update(SnapshotRow).where(SnapshotRow.id == snapshot_id)
        if not self._rows_changed(statement.values(**_stored_values(changes))):
            raise NotFound("snapshot", snapshot_id)
        return self.by_id(snapshot_id)

    def finish_taking(self, snapshot_id: str, **changes: Any) -> SnapshotRecord | None:
        """``update`` a snapshot only while it is TAKING; None when it is not (any more): of two
        servers collecting or expiring the same snapshot, one changes it."""
        statement = update(SnapshotRow).where(
            SnapshotRow.id == snapshot_id, SnapshotRow.status == SnapshotStatus.TAKING.value
        )
        if not self._rows_changed(statement.values(**_stored_values(changes))):
            return None
        return self.by_id(snapshot_id)

    def delete(self, snapshot_id: str) -> bool:
        """Delete the row; whether there was one."""
        return bool(self._rows_changed(delete(SnapshotRow).where(SnapshotRow.id == snapshot_id)))

    def delete_of_job(self, job_name: str) -> builtins.list[SnapshotRecord]:
        """Delete every snapshot row of the job; the rows deleted (their directories are the
        caller's to remove once the transaction commits)."""
        deleted = self.list(job_name)
        self._rows_changed(delete(SnapshotRow).where(SnapshotRow.job_name == job_name))
        return deleted


def _stored_values(changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` as the columns keep them; ``TypeError`` for a field that cannot change."""
    unknown = changes.keys() - CHANGEABLE_FIELDS
    if unknown:
        raise TypeError(f"a snapshot's {', '.join(sorted(unknown))} cannot be changed")
    values = dict(changes)
    if "status" in values:
        values["status"] = SnapshotStatus(values["status"]).value
    if "positions" in values:
        values["positions"] = [position.to_wire() for position in values["positions"]]
    return values


def _record(row: Sequence[Any]) -> SnapshotRecord:
    (
        snapshot_id,
        job_name,
        name,
        kind,
        status,
        application_id,
        spec_version,
        batches,
        positions,
        requested_at,
        taken_at,
        size_bytes,
        error,
        requested_by,
        directory,
    ) = row
    return SnapshotRecord(
        id=snapshot_id,
        job_name=job_name,
        name=name,
        kind=SnapshotKind(kind),
        status=SnapshotStatus(status),
        application_id=application_id,
        spec_version=spec_version,
        batches={str(key): int(value) for key, value in (batches or {}).items()},
        positions=[OutputPosition.model_validate(item) for item in positions or []],
        requested_at=requested_at,
        taken_at=taken_at,
        size_bytes=size_bytes,
        error=error,
        requested_by=requested_by,
        directory=directory,
    )
