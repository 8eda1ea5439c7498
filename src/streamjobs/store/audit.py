"""The append-only audit log: who changed what, when, and from where.

Entries are written in the same transaction as the change they describe, so a change that is
rolled back leaves no entry behind and a change that lands always has one.
"""

from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select

from streamjobs.store.base import Repository
from streamjobs.store.tables import AuditEntryRow


@dataclass(frozen=True)
class AuditEntry:
    """One change: ``actor`` did ``action`` to the ``resource_kind`` called ``resource_name``."""

    id: int
    at: datetime
    actor: str
    action: str
    resource_kind: str
    resource_name: str
    detail: dict[str, Any]
    source: str | None


class AuditRepository(Repository):
    """Appends to and reads the audit log; entries are never changed or removed."""

    def append(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        resource_kind: str,
        resource_name: str,
        detail: dict[str, Any],
        source: str | None,
    ) -> AuditEntry:
        """Add an entry to the log (``source`` says where the change came from, e.g. "api")."""
        row = AuditEntryRow(
            at=at,
            actor=actor,
            action=action,
            resource_kind=resource_kind,
            resource_name=resource_name,
            detail=detail,
            source=source,
        )
        self._insert(row)
        return _entry(row)

    def list(
        self,
        *,
        limit: int = 100,
        offset: int = 0,
        actor: str | None = None,
        resource_kind: str | None = None,
        action: str | None = None,
    ) -> builtins.list[AuditEntry]:
        """One page of the entries that pass every given filter, newest first (``action``
        matches a prefix: ``job.`` finds every job action)."""
        criteria = _criteria(actor, resource_kind, action)
        rows = self._session.scalars(
            select(AuditEntryRow)
            .where(*criteria)
            .order_by(AuditEntryRow.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_entry(row) for row in rows]

    def count(
        self,
        *,
        actor: str | None = None,
        resource_kind: str | None = None,
        action: str | None = None,
    ) -> int:
        criteria = _criteria(actor, resource_kind, action)
        counted = select(func.count()).select_from(AuditEntryRow).where(*criteria)
        return self._session.scalar(counted) or 0


def _criteria(
    actor: str | None, resource_kind: str | None, action: str | None
) -> builtins.list[ColumnElement[bool]]:
    criteria: builtins.list[ColumnElement[bool]] = []
    if actor:
        criteria.append(AuditEntryRow.actor == actor)
    if resource_kind:
        criteria.append(AuditEntryRow.resource_kind == resource_kind)
    if action:
        criteria.append(AuditEntryRow.action.startswith(action, autoescape=True))
    return criteria


def _entry(row: AuditEntryRow) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        at=row.at,
        actor=row.actor,
        action=row.action,
        resource_kind=row.resource_kind,
        resource_name=row.resource_name,
        detail=copy.deepcopy(row.detail),
        source=row.source,
    )
