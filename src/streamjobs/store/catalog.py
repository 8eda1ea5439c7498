"""The names jobs refer to: node types (driver and executor sizes) and resource bundles with
their quotas, data roots and Spark setting policy.

The first migration seeds the bundle ``default`` and the node types ``small``, ``medium`` and
``large``. A bundle's permission grants are kept by ``store.access``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, select, update

from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.domain.quotas import NodeSize, Quota
from streamjobs.store.base import Repository, VersionedRepository
from streamjobs.store.tables import NodeTypeRow, ResourceBundleRow


@dataclass(frozen=True)
class NodeTypeRecord:
    """A named size for a driver or an executor."""

    name: str
    cores: int
    memory_mb: int


@dataclass(frozen=True)
class BundleRecord:
    """A resource bundle: a named group of jobs, and its quotas."""

    name: str
    created_at: datetime
    description: str | None = None
    quota: Quota = field(default_factory=Quota)
    version: int = 1
    """Bumped by every change of the description, the quotas, the data roots, the Spark
    setting policy or the grants."""
    data_roots: tuple[str, ...] | None = None
    """URIs under which the bundle's jobs' paths, datasets and checkpoints must fall; None when
    never set (the server seeds the ``default`` bundle's from its settings on first start)."""
    spark_conf_allowed: tuple[str, ...] = ()
    """Spark settings (or ``prefix.*`` patterns) this bundle's jobs may set although they are
    restricted by default (``spark.jars.repositories``, say)."""
    spark_conf_refused: tuple[str, ...] = ()
    """Spark settings (or ``prefix.*`` patterns) this bundle's jobs may not set, beyond those
    refused everywhere."""


_NODE_TYPE = select(NodeTypeRow.name, NodeTypeRow.cores, NodeTypeRow.memory_mb).where(
    NodeTypeRow.name == bindparam("name")
)
_BUNDLE_NAMED = select(ResourceBundleRow.name).where(ResourceBundleRow.name == bindparam("name"))
"""Look-ups every job change makes (``_check_references``), built once and read as plain rows."""


class NodeTypeRepository(Repository):
    """Adds, changes, reads and deletes node types."""

    def put(self, name: str, *, cores: int, memory_mb: int) -> bool:
        """Create or change the node type; True if it was created."""
        row = self._session.get(NodeTypeRow, name)
        if row is None:
            self._insert(NodeTypeRow(name=name, cores=cores, memory_mb=memory_mb))
            return True
        row.cores, row.memory_mb = cores, memory_mb
        self._session.flush()
        return False

    def delete(self, name: str) -> None:
        if not self._rows_changed(delete(NodeTypeRow).where(NodeTypeRow.name == name)):
            raise NotFound("node type", name)

    def sizes(self) -> dict[str, NodeSize]:
        """Every node type's size, by name."""
        return {n.name: NodeSize(n.cores, n.memory_mb) for n in self.list()}

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
        row = self._read(_NODE_TYPE, {"name": name}).first()
        return None if row is None else NodeTypeRecord(row.name, row.cores, row.memory_mb)


class BundleRepository(VersionedRepository):
    """Adds, changes, reads and deletes resource bundles."""

    _table = ResourceBundleRow
    _kind = "resource bundle"

    def list(self) -> builtins.list[BundleRecord]:
        """Every bundle, by name."""
        rows = self._session.scalars(select(ResourceBundleRow).order_by(ResourceBundleRow.name))
        return [_bundle_record(row) for row in rows]

    def exists(self, name: str) -> bool:
        """Whether a bundle called ``name`` exists."""
        return self._read(_BUNDLE_NAMED, {"name": name}).first() is not None

    def get(self, name: str) -> BundleRecord:
        row = self._session.get(ResourceBundleRow, name)
        if row is None:
            raise NotFound("resource bundle", name)
        return _bundle_record(row)

    def add(
        self,
        name: str,
        at: datetime,
        *,
        description: str | None = None,
        quota: Quota = Quota(),
        data_roots: Sequence[str] | None = None,
        spark_conf_allowed: Sequence[str] = (),
        spark_conf_refused: Sequence[str] = (),
    ) -> BundleRecord:
        """Store a new bundle; ``AlreadyExists`` if the name is taken."""
        if self.exists(name):
            raise AlreadyExists("resource bundle", name)
        row = ResourceBundleRow(
            name=name,
            created_at=at,
            description=description,
            **_quota_columns(quota),
            **_policy_columns(data_roots, spark_conf_allowed, spark_conf_refused),
        )
        self._insert_unique(row, kind="resource bundle", name=name)
        return _bundle_record(row)

    def update(
        self,
        name: str,
        *,
        description: str | None,
        quota: Quota,
        data_roots: Sequence[str] | None = None,
        spark_conf_allowed: Sequence[str] | None = None,
        spark_conf_refused: Sequence[str] | None = None,
        expected_version: int | None = None,
    ) -> None:
        """Set the description and quotas, and the data roots and Spark setting lists given
        (each left None stays as it is), and bump the version; with ``expected_version``, only
        if the bundle is still at it (``Conflict`` if not, ``NotFound`` if it is gone)."""
        self.bump(
            name,
            expected_version=expected_version,
            description=description,
            **_quota_columns(quota),
            **_policy_columns(data_roots, spark_conf_allowed, spark_conf_refused),
        )

    def set_policy(
        self,
        name: str,
        *,
        data_roots: Sequence[str] | None,
        spark_conf_allowed: Sequence[str] | None,
        spark_conf_refused: Sequence[str] | None,
        expected_version: int | None = None,
    ) -> None:
        """Set the data roots and Spark setting lists given (None: as they are), keeping the
        description and quotas, and bump the version like ``update``."""
        self.bump(
            name,
            expected_version=expected_version,
            **_policy_columns(data_roots, spark_conf_allowed, spark_conf_refused),
        )

    def seed_data_roots(self, name: str, roots: Sequence[str]) -> bool:
        """Give the bundle ``roots`` if it has never had data roots, bumping its version; False
        if it has had some (or is gone). One statement, so two servers starting at once on
        one database seed it once."""
        table = ResourceBundleRow
        statement = (
            update(table)
            .where(table.name == name, table.data_roots.is_(None))
            .values(data_roots=list(roots), version=table.version + 1)
        )
        return bool(self._rows_changed(statement))

    def bump(self, name: str, *, expected_version: int | None = None, **values: Any) -> None:
        """Bump the version (for a change of its grants, kept elsewhere), like ``update``."""
        if expected_version is None:
            self._update_bumping(name, name, **values)
        else:
            self._update_versioned(name, name, expected_version=expected_version, **values)

    def lock(self, name: str) -> None:
        """Hold the bundle's row for this transaction, so quota checks of concurrent Runs take
        turns (on SQLite the write begins the transaction's write lock)."""
        statement = (
            update(ResourceBundleRow)
            .where(ResourceBundleRow.name == name)
            .values(name=ResourceBundleRow.name)
        )
        if not self._rows_changed(statement):
            raise NotFound("resource bundle", name)

    def delete(self, name: str, *, expected_version: int | None = None) -> None:
        """Delete the bundle; with ``expected_version``, only if it is still at that version."""
        self._delete_versioned(name, name, expected_version)


def _node_type_record(row: NodeTypeRow) -> NodeTypeRecord:
    return NodeTypeRecord(name=row.name, cores=row.cores, memory_mb=row.memory_mb)


def _quota_columns(quota: Quota) -> dict[str, int | None]:
    return {
        "max_running_applications": quota.max_running_applications,
        "max_cores": quota.max_cores,
        "max_memory_mb": quota.max_memory_mb,
    }


def _policy_columns(
    data_roots: Sequence[str] | None,
    spark_conf_allowed: Sequence[str] | None,
    spark_conf_refused: Sequence[str] | None,
) -> dict[str, list[str]]:
    """The columns of the policy fields given (None: not given)."""
    given = {
        "data_roots": data_roots,
        "spark_conf_allowed": spark_conf_allowed,
        "spark_conf_refused": spark_conf_refused,
    }
    return {column: list(value) for column, value in given.items() if value is not None}


def _bundle_record(row: ResourceBundleRow) -> BundleRecord:
    return BundleRecord(
        name=row.name,
        created_at=row.created_at,
        description=row.description,
        quota=Quota(
            max_running_applications=row.max_running_applications,
            max_cores=row.max_cores,
            max_memory_mb=row.max_memory_mb,
        ),
        version=row.version,
        data_roots=None if row.data_roots is None else tuple(row.data_roots),
        spark_conf_allowed=tuple(row.spark_conf_allowed or ()),
        spark_conf_refused=tuple(row.spark_conf_refused or ()),
    )
