"""Named connections in the store, with optimistic concurrency (see ``VersionedRepository``).

A connection row keeps its validated manifest, plus its type and tags copied out of it so lists can
show and filter them without reading every manifest.
"""

from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import ColumnElement, Select, func, select, update

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import VersionedRepository
from streamjobs.store.tables import ConnectionRow


@dataclass(frozen=True)
class ConnectionRecord:
    """A connection as stored: the validated manifest plus the store's bookkeeping."""

    id: str
    name: str
    namespace: str
    type: str
    description: str | None
    manifest: dict[str, Any]
    tags: dict[str, str]
    version: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime


class ConnectionRepository(VersionedRepository):
    """Adds, reads, lists, changes and deletes connections."""

    _table = ConnectionRow
    _kind = "connection"

    def add(
        self,
        *,
        name: str,
        namespace: str,
        connection_type: str,
        description: str | None,
        manifest: dict[str, Any],
        tags: dict[str, str],
        actor: str,
        at: datetime,
    ) -> ConnectionRecord:
        """Store a new connection at version 1; ``AlreadyExists`` if the name is taken."""
        if self.find(name) is not None:
            raise AlreadyExists("connection", name)
        row = ConnectionRow(
            id=str(uuid4()),
            name=name,
            namespace=namespace,
            type=connection_type,
            description=description,
            manifest=manifest,
            tags=tags,
            created_by=actor,
            created_at=at,
            updated_by=actor,
            updated_at=at,
        )
        self._insert_unique(row, kind="connection", name=name)
        return _record(row)

    def get(self, name: str) -> ConnectionRecord:
        """The connection called ``name``; ``NotFound`` if there is none."""
        connection = self.find(name)
        if connection is None:
            raise NotFound("connection", name)
        return connection

    def locked(self, name: str) -> ConnectionRecord | None:
        """The connection called ``name``, its row held until the transaction ends (so applies
        of it take turns; on SQLite, the transaction's write lock); None if there is none."""
        statement = (
            update(ConnectionRow).where(ConnectionRow.name == name).values(name=ConnectionRow.name)
        )
        return self.find(name) if self._rows_changed(statement) else None

    def find(self, name: str) -> ConnectionRecord | None:
        """The connection called ``name``, or None."""
        row = self._session.scalars(
            _select_connections().where(ConnectionRow.name == name)
        ).one_or_none()
        return None if row is None else _record(row)

    def list(
        self,
        *,
        connection_type: str | None = None,
        search: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        lock_for_share: bool = False,
    ) -> tuple[builtins.list[ConnectionRecord], int]:
        """One page of the connections that pass every given filter, by name, and how many pass
        in all; ``limit`` None means all of them.

        ``search`` matches any part of the name, ignoring case. ``lock_for_share`` keeps the rows
        read from being changed or deleted by others until the transaction ends (PostgreSQL's
        ``FOR SHARE``; SQLite lets one writer at a time anyway).
        """
        criteria = _criteria(connection_type=connection_type, search=search)
        total = self._session.scalar(
            select(func.count()).select_from(ConnectionRow).where(*criteria)
        )
        page = _select_connections().where(*criteria).order_by(ConnectionRow.name).offset(offset)
        if limit is not None:
            page = page.limit(limit)
        if lock_for_share:
            page = page.with_for_update(read=True)
        return [_record(row) for row in self._session.scalars(page)], total or 0

    def update(
        self,
        name: str,
        *,
        expected_version: int,
        manifest: dict[str, Any],
        connection_type: str,
        description: str | None,
        tags: dict[str, str],
        actor: str,
        at: datetime,
    ) -> ConnectionRecord:
        """Replace the connection's manifest, type, description and tags, and bump its version.

        ``Conflict`` if it is no longer at ``expected_version``; ``NotFound`` if it is gone.
        """
        connection = self.get(name)
        self._update_versioned(
            connection.id,
            name,
            expected_version=expected_version,
            manifest=manifest,
            type=connection_type,
            description=description,
            tags=tags,
            updated_by=actor,
            updated_at=at,
        )
        return self.get(name)

    def delete(self, name: str, *, expected_version: int | None = None) -> None:
        """Delete the connection; with ``expected_version``, only if still at that version."""
        connection = self.get(name)
        self._delete_versioned(connection.id, name, expected_version)


def _select_connections() -> Select[ConnectionRow]:
    """Select connections, refreshing rows the session read before: others may have changed
    them since."""
    return select(ConnectionRow).execution_options(populate_existing=True)


def _criteria(
    *, connection_type: str | None, search: str | None
) -> builtins.list[ColumnElement[bool]]:
    criteria: builtins.list[ColumnElement[bool]] = []
    if connection_type is not None:
        criteria.append(ConnectionRow.type == connection_type)
    if search:
        criteria.append(ConnectionRow.name.icontains(search, autoescape=True))
    return criteria


def _record(row: ConnectionRow) -> ConnectionRecord:
    return ConnectionRecord(
        id=row.id,
        name=row.name,
        namespace=row.namespace,
        type=row.type,
        description=row.description,
        manifest=copy.deepcopy(row.manifest),
        tags=dict(row.tags),
        version=row.version,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )
