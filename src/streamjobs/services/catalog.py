"""The names a job form offers to choose from: resource bundles, node types and namespaces."""

from __future__ import annotations

from dataclasses import dataclass

from streamjobs.store.catalog import NodeTypeRecord
from streamjobs.store.db import Store

DEFAULT_NAMESPACE = "default"
JOBS_READ_FOR_NAMESPACES = 500


@dataclass(frozen=True)
class CatalogChoices:
    """What exists on the server for a job to refer to."""

    bundles: tuple[str, ...]
    node_types: tuple[NodeTypeRecord, ...]
    namespaces: tuple[str, ...]
    """The namespaces jobs use (``default`` when there are no jobs yet)."""

    @property
    def only_namespace(self) -> str | None:
        """The namespace to preselect for a new job: the only one there is, if so."""
        return self.namespaces[0] if len(self.namespaces) == 1 else None


def bundle_names(store: Store) -> list[str]:
    """Every resource bundle's name, in order."""
    with store.transaction() as repos:
        return [bundle.name for bundle in repos.bundles.list()]


def catalog_choices(store: Store) -> CatalogChoices:
    """The bundles and node types (smallest first) that exist, and the namespaces in use."""
    with store.transaction() as repos:
        bundles = tuple(bundle.name for bundle in repos.bundles.list())
        node_types = tuple(repos.node_types.list())
        jobs, _ = repos.jobs.list(limit=JOBS_READ_FOR_NAMESPACES)
    namespaces = tuple(sorted({job.namespace for job in jobs})) or (DEFAULT_NAMESPACE,)
    return CatalogChoices(bundles=bundles, node_types=node_types, namespaces=namespaces)
