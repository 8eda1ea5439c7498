"""Upgrades of jobs' running applications in the store: what each moved from and to, and where
it is in its life (``domain.upgrades``).

A row is written when an upgrade is asked for (STOPPING) and moved on by the supervisor's
upgrade step. Each move names the status it was read in (``move``), so of two servers moving
the same upgrade one does and the other sees it moved. A job has at most one upgrade in
progress: ``add`` refuses a second, and so does the database through the unique ``active_key``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import Select, delete, select, update
from sqlalchemy.exc import IntegrityError

from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.upgrades import (
    ACTIVE_UPGRADE_STATUSES,
    UpgradeMode,
    UpgradeStatus,
)
from streamjobs.store.base import Repository
from streamjobs.store.upgrade_tables import UpgradeRow

CHANGEABLE_FIELDS = frozenset(
    {
        "to_application_id",
        "rollback_application_id",
        "to_job_version",
        "rollback_job_version",
        "to_spec",
        "started_at",
        "watch_until",
        "finished_at",
        "reason",
    }
)
"""What ``move`` may change besides the status: how the upgrade went. Its job, mode, origin and
requester are fixed."""


@dataclass(frozen=True)
class UpgradeRecord:
    """An upgrade as stored."""

    id: str
    job_name: str
    mode: UpgradeMode
    status: UpgradeStatus
    from_application_id: str | None
    """The application it stopped (None once that application is gone)."""
    to_application_id: str | None
    """The application it started on the new spec, once started."""
    rollback_application_id: str | None
    """The application its rollback started on the previous spec, once rolled back."""
    from_job_version: int
    """The job version the stopped application ran."""
    to_job_version: int
    """The job version the upgrade moves to (the one it started, once started)."""
    rollback_job_version: int | None
    """The job version its rollback wrote, putting the previous spec back."""
    from_spec: dict[str, Any]
    """The stopped application's spec (its resolved template)."""
    to_spec: dict[str, Any]
    """The new spec (resolved template)."""
    snapshot_name: str | None
    """The aligned snapshot taken at the stop, the rollback point (None: the application took
    none, being no pipeline with a checkpoint on this machine)."""
    requested_by: str
    requested_at: datetime
    started_at: datetime | None
    watch_until: datetime | None
    finished_at: datetime | None
    reason: str | None
    """Why it ended (or is rolling back) as it did."""


_COLUMNS = [
    UpgradeRow.id,
    UpgradeRow.job_name,
    UpgradeRow.mode,
    UpgradeRow.status,
    UpgradeRow.from_application_id,
    UpgradeRow.to_application_id,
    UpgradeRow.rollback_application_id,
    UpgradeRow.from_job_version,
    UpgradeRow.to_job_version,
    UpgradeRow.rollback_job_version,
    UpgradeRow.from_spec,
    UpgradeRow.to_spec,
    UpgradeRow.snapshot_name,
    UpgradeRow.requested_by,
    UpgradeRow.requested_at,
    UpgradeRow.started_at,
    UpgradeRow.watch_until,
    UpgradeRow.finished_at,
    UpgradeRow.reason,
]
_SELECT: Select[Any] = select(*_COLUMNS)
_ACTIVE = [status.value for status in ACTIVE_UPGRADE_STATUSES]


class UpgradeRepository(Repository):
    """Adds, reads and moves on upgrade rows."""

    def add(
        self,
        *,
        job_name: str,
        mode: UpgradeMode,
        from_application_id: str,
        from_job_version: int,
        to_job_version: int,
        from_spec: dict[str, Any],
        to_spec: dict[str, Any],
        snapshot_name: str | None,
        requested_by: str,
        requested_at: datetime,
    ) -> UpgradeRecord:
        """Store a new upgrade of ``job_name``, STOPPING; ``Conflict`` naming the one in
        progress when the job has one (another transaction's included)."""
        ongoing = self.active_for_job(job_name)
        if ongoing is not None:
            raise _in_progress(job_name, ongoing)
        row = UpgradeRow(
            id=f"upg-{uuid4().hex[:12]}",
            job_name=job_name,
            mode=UpgradeMode(mode).value,
            status=UpgradeStatus.STOPPING.value,
            active_key=job_name,
            from_application_id=from_application_id,
            from_job_version=from_job_version,
            to_job_version=to_job_version,
            from_spec=from_spec,
            to_spec=to_spec,
            snapshot_name=snapshot_name,
            requested_by=requested_by,
            requested_at=requested_at,
        )
        try:
            self._insert(row)
        except IntegrityError as error:
            raise Conflict(
                f"job {job_name!r} got another upgrade while this one was being asked for; "
                "read the job's upgrades and retry"
            ) from error
        return self.get(row.id)

    def get(self, upgrade_id: str) -> UpgradeRecord:
        """The upgrade ``upgrade_id``; ``NotFound`` if there is none."""
        row = self._read(_SELECT.where(UpgradeRow.id == upgrade_id)).one_or_none()
        if row is None:
            raise NotFound("upgrade", upgrade_id)
        return _record(row)

    def of_job(self, job_name: str, upgrade_id: str) -> UpgradeRecord:
        """The job's upgrade ``upgrade_id``; ``NotFound`` naming both if the job has none."""
        row = self._read(
            _SELECT.where(UpgradeRow.id == upgrade_id, UpgradeRow.job_name == job_name)
        ).one_or_none()
        if row is None:
            raise NotFound("upgrade", f"{job_name}/{upgrade_id}")
        return _record(row)

    def list(self, job_name: str) -> builtins.list[UpgradeRecord]:
        """The job's upgrades, newest first."""
        statement = _SELECT.where(UpgradeRow.job_name == job_name).order_by(
            UpgradeRow.requested_at.desc(), UpgradeRow.id.desc()
        )
        return [_record(row) for row in self._read(statement).all()]

    def active(self) -> builtins.list[UpgradeRecord]:
        """Every upgrade in progress, oldest first: what the supervisor moves on."""
        statement = _SELECT.where(UpgradeRow.status.in_(_ACTIVE)).order_by(
            UpgradeRow.requested_at, UpgradeRow.id
        )
        return [_record(row) for row in self._read(statement).all()]

    def active_for_job(self, job_name: str) -> UpgradeRecord | None:
        """The job's upgrade in progress, or None."""
        row = self._read(_SELECT.where(UpgradeRow.active_key == job_name)).one_or_none()
        return None if row is None else _record(row)

    def move(
        self, upgrade_id: str, *, expected: UpgradeStatus, status: UpgradeStatus, **changes: Any
    ) -> UpgradeRecord | None:
        """Move the upgrade from ``expected`` to ``status``, changing the fields named in
        ``CHANGEABLE_FIELDS``; None when it is no longer ``expected`` (moved meanwhile, or gone).
        ``TypeError`` for a field that cannot change."""
        unknown = changes.keys() - CHANGEABLE_FIELDS
        if unknown:
            raise TypeError(f"an upgrade's {', '.join(sorted(unknown))} cannot be changed")
        current = self._read(
            select(UpgradeRow.job_name).where(UpgradeRow.id == upgrade_id)
        ).scalar_one_or_none()
        if current is None:
            return None
        status = UpgradeStatus(status)
        values = {
            **changes,
            "status": status.value,
            "active_key": current if status in ACTIVE_UPGRADE_STATUSES else None,
        }
        statement = (
            update(UpgradeRow)
            .where(UpgradeRow.id == upgrade_id, UpgradeRow.status == UpgradeStatus(expected).value)
            .values(**values)
        )
        if not self._rows_changed(statement):
            return None
        return self.get(upgrade_id)

    def delete_of_job(self, job_name: str) -> int:
        """Delete every upgrade of the job; how many there were."""
        return self._rows_changed(delete(UpgradeRow).where(UpgradeRow.job_name == job_name))


def _in_progress(job_name: str, ongoing: UpgradeRecord) -> Conflict:
    return Conflict(
        f"job {job_name!r} has an upgrade in progress ({ongoing.id}, {ongoing.status}); "
        "wait until it has ended"
    )


def _record(row: Sequence[Any]) -> UpgradeRecord:
    values = dict(zip((column.key for column in _COLUMNS), row, strict=True))
    values["mode"] = UpgradeMode(values["mode"])
    values["status"] = UpgradeStatus(values["status"])
    return UpgradeRecord(**values)
