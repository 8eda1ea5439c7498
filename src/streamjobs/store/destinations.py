"""Notification destinations in the store, with optimistic concurrency on their version.

A destination row keeps its validated manifest and, copied out of it, what the delivery worker
needs without parsing it again: its kind, the bundle its secret names resolve in, its settings
(``config``, secret names only, never values) and the secret names those settings use. The
worker also keeps its health here: consecutive failed deliveries, and whether it is healthy.
"""

from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select, update

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import VersionedRepository
from streamjobs.store.notification_tables import NotificationDestinationRow

KIND = "notification destination"


@dataclass(frozen=True)
class DestinationRecord:
    """A notification destination as stored.

    ``config`` is the manifest's ``spec`` without ``type`` and ``bundle``, keyed as in the
    manifest (``host``, ``passwordSecret``, ``url``, ``headerSecrets``...); secret fields hold
    names, resolved in ``bundle`` when a notice is sent. ``secret_names`` lists each of them
    once, sorted.
    """

    name: str
    kind: str
    """``email``, ``webhook`` or ``slack``."""
    bundle: str
    description: str | None
    config: dict[str, Any]
    secret_names: tuple[str, ...]
    healthy: bool
    consecutive_failures: int
    manifest: dict[str, Any]
    version: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime


@dataclass(frozen=True)
class HealthChange:
    """What one delivery's outcome did to its destination's health."""

    healthy: bool
    consecutive_failures: int
    changed: bool
    """The outcome flipped ``healthy`` (worth an audit entry)."""


class DestinationRepository(VersionedRepository):
    """Adds, reads, lists, changes and deletes notification destinations; keeps their health."""

    _table = NotificationDestinationRow
    _kind = KIND

    def add(
        self,
        *,
        name: str,
        kind: str,
        bundle: str,
        description: str | None,
        manifest: dict[str, Any],
        config: dict[str, Any],
        secret_names: tuple[str, ...],
        actor: str,
        at: datetime,
    ) -> DestinationRecord:
        """Store a new, healthy destination at version 1; ``AlreadyExists`` if the name is taken."""
        if self.find(name) is not None:
            raise AlreadyExists(KIND, name)
        row = NotificationDestinationRow(
            name=name,
            kind=kind,
            bundle=bundle,
            description=description,
            manifest=manifest,
            config=config,
            secret_names=sorted(set(secret_names)),
            healthy=True,
            consecutive_failures=0,
            version=1,
            created_by=actor,
            created_at=at,
            updated_by=actor,
            updated_at=at,
        )
        self._insert_unique(row, kind=KIND, name=name)
        return _record(row)

    def get(self, name: str) -> DestinationRecord:
        """The destination called ``name``; ``NotFound`` if there is none."""
        destination = self.find(name)
        if destination is None:
            raise NotFound(KIND, name)
        return destination

    def find(self, name: str) -> DestinationRecord | None:
        """The destination called ``name``, or None."""
        row = self._session.scalars(
            _select_destinations().where(NotificationDestinationRow.name == name)
        ).one_or_none()
        return None if row is None else _record(row)

    def list(
        self, *, bundle: str | None = None, kind: str | None = None
    ) -> builtins.list[DestinationRecord]:
        """Every destination (of ``bundle``, of ``kind``, when given), by name."""
        statement = _select_destinations().order_by(NotificationDestinationRow.name)
        if bundle is not None:
            statement = statement.where(NotificationDestinationRow.bundle == bundle)
        if kind is not None:
            statement = statement.where(NotificationDestinationRow.kind == kind)
        return [_record(row) for row in self._session.scalars(statement)]

    def existing(self, names: builtins.list[str], *, lock_for_share: bool = False) -> set[str]:
        """Which of ``names`` are destinations (one query, for checking a job's subscriptions).
        ``lock_for_share`` keeps those found from being deleted until the transaction ends
        (PostgreSQL's ``FOR SHARE``; SQLite lets one writer at a time anyway)."""
        if not names:
            return set()
        statement = select(NotificationDestinationRow.name).where(
            NotificationDestinationRow.name.in_(set(names))
        )
        if lock_for_share:
            statement = statement.with_for_update(read=True)
        return set(self._session.scalars(statement))

    def update(
        self,
        name: str,
        *,
        expected_version: int,
        kind: str,
        bundle: str,
        description: str | None,
        manifest: dict[str, Any],
        config: dict[str, Any],
        secret_names: tuple[str, ...],
        actor: str,
        at: datetime,
    ) -> DestinationRecord:
        """Replace the destination's settings and bump its version; its health is kept.

        ``StaleVersion`` (a ``Conflict``) if it is no longer at ``expected_version``;
        ``NotFound`` if it is gone.
        """
        self._update_versioned(
            name,
            name,
            expected_version=expected_version,
            kind=kind,
            bundle=bundle,
            description=description,
            manifest=manifest,
            config=config,
            secret_names=sorted(set(secret_names)),
            updated_by=actor,
            updated_at=at,
        )
        return self.get(name)

    def delete(self, name: str, *, expected_version: int | None = None) -> None:
        """Delete the destination; with ``expected_version``, only if still at that version."""
        self._delete_versioned(name, name, expected_version)

    def record_outcome(self, name: str, *, delivered: bool, unhealthy_after: int) -> HealthChange:
        """Count one delivery's outcome: a success makes the destination healthy and clears its
        failures; a failure adds one, and ``unhealthy_after`` in a row make it unhealthy.
        ``NotFound`` if the destination is gone. The version is not bumped: health is not a
        setting anyone edits. The row is locked first, so concurrent outcomes count one by one."""
        lock = (
            update(NotificationDestinationRow)
            .where(NotificationDestinationRow.name == name)
            .values(name=NotificationDestinationRow.name)
        )
        if not self._rows_changed(lock):
            raise NotFound(KIND, name)
        current = self.get(name)
        failures = 0 if delivered else current.consecutive_failures + 1
        healthy = delivered or (current.healthy and failures < unhealthy_after)
        self._session.execute(
            update(NotificationDestinationRow)
            .where(NotificationDestinationRow.name == name)
            .values(healthy=healthy, consecutive_failures=failures)
        )
        return HealthChange(
            healthy=healthy, consecutive_failures=failures, changed=healthy != current.healthy
        )

    def unhealthy_count(self) -> int:
        """How many destinations are unhealthy now."""
        statement = (
            select(func.count())
            .select_from(NotificationDestinationRow)
            .where(NotificationDestinationRow.healthy.is_(False))
        )
        return self._session.scalar(statement) or 0


def _select_destinations() -> Select[NotificationDestinationRow]:
    """Select destinations, refreshing rows the session read before: others may have changed
    them since."""
    return select(NotificationDestinationRow).execution_options(populate_existing=True)


def _record(row: NotificationDestinationRow) -> DestinationRecord:
    return DestinationRecord(
        name=row.name,
        kind=row.kind,
        bundle=row.bundle,
        description=row.description,
        config=copy.deepcopy(row.config),
        secret_names=tuple(row.secret_names),
        healthy=row.healthy,
        consecutive_failures=row.consecutive_failures,
        manifest=copy.deepcopy(row.manifest),
        version=row.version,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )
