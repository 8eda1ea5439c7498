"""The names jobs refer to: node types (driver and executor sizes) and resource bundles.

The first migration seeds the bundle ``default`` and the node types ``small``, ``medium`` and
``large``; quotas and permission grants of bundles come later.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import Repository
from streamjobs.store.tables import NodeTypeRow, ResourceBundleRow


@dataclass(frozen=True)
class NodeTypeRecord:
    """A named size for a driver or an executor."""

    name: str
    cores: int
    memory_mb: int


@dataclass(frozen=True)
class BundleRecord:
    """A resource bundle: a named group of jobs."""

    name: str
    created_at: datetime


class NodeTypeRepository(Repository):
    """Reads node types."""

    def list(self) -> builtins.list[NodeTypeRecord]:
        """Every node type, smallest first."""
        rows = self._session.scalars(
            select(NodeTypeRow).order_by(NodeTypeRow.cores, NodeTypeRow.memory_mb, NodeTypeRow.name)
        )
        return [_node_type_record(row) for row in rows]

    def get(self, name: str) -> NodeTypeRecord:
        """The node type called ``name``; ``NotFound`` if there is none."""
        node_type = self.find(name)
        if node_type is None:
            raise NotFound("node type", name)
        return node_type

    def find(self, name: str) -> NodeTypeRecord | None:
        """The node type called ``name``, or None."""
        row = self._session.get(NodeTypeRow, name)
        return None if row is None else _node_type_record(row)


class BundleRepository(Repository):
    """Adds and reads resource bundles."""

    def list(self) -> builtins.list[BundleRecord]:
        """Every bundle, by name."""
        rows = self._session.scalars(select(ResourceBundleRow).order_by(ResourceBundleRow.name))
        return [_bundle_record(row) for row in rows]

    def exists(self, name: str) -> bool:
        """Whether a bundle called ``name`` exists."""
        return self._session.get(ResourceBundleRow, name) is not None

    def add(self, name: str, at: datetime) -> BundleRecord:
        """Store a new bundle; ``AlreadyExists`` if the name is taken."""
        if self.exists(name):
            raise AlreadyExists("resource bundle", name)
        row = ResourceBundleRow(name=name, created_at=at)
        self._insert_unique(row, kind="resource bundle", name=name)
        return _bundle_record(row)


def _node_type_record(row: NodeTypeRow) -> NodeTypeRecord:
    return NodeTypeRecord(name=row.name, cores=row.cores, memory_mb=row.memory_mb)


def _bundle_record(row: ResourceBundleRow) -> BundleRecord:
    return BundleRecord(name=row.name, created_at=row.created_at)
