"""Resource bundles (their quotas, data roots, Spark setting policy and grants) and node types,
on behalf of an actor.

Bundles are managed with Manage bundles; node types by admins. Anyone sees the bundles they hold
a grant on, with what they hold and what the bundle's running applications take now against
its quotas. Every change is audited in its transaction. A data root may not be ``/`` nor lie
inside or hold a protected root (the server's home), which no job may reach.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    bundle_permissions,
    has_domain_permission,
    name_errors,
    require_admin,
    require_domain_permission,
)
from streamjobs.domain.bundle_policy import (
    SparkConfPolicy,
    checked_data_roots,
    checked_spark_conf_policy,
    data_root_problem,
)
from streamjobs.domain.clock import Clock
from streamjobs.domain.control_characters import text_error
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput, NotFound
from streamjobs.domain.locations import normalized_uri
from streamjobs.domain.quotas import Demand, Quota
from streamjobs.services.access import grants_for
from streamjobs.services.people import require_subject
from streamjobs.services.resources import audit
from streamjobs.store.catalog import BundleRecord, NodeTypeRecord
from streamjobs.store.db import Repositories, Store

MAX_CORES = 100_000
MAX_MEMORY_MB = 1 << 30
DEFAULT_BUNDLE = "default"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BundleView:
    """A bundle as its viewer sees it: its quotas, what is in use, its grants (for those who
    manage bundles, else only the viewer's own) and what the viewer holds on it."""

    bundle: BundleRecord
    in_use: Demand
    jobs: int
    grants: tuple[BundleGrant, ...]
    held: frozenset[Permission]


class BundleService:
    """Creates, changes, grants and reads resource bundles, and keeps node types."""

    def __init__(self, *, store: Store, clock: Clock, protected_roots: Sequence[str]) -> None:
        self._store = store
        self._clock = clock
        self._protected_roots = tuple(protected_roots)

    def list(self, *, actor: Actor) -> builtins.list[BundleView]:
        """The bundles ``actor`` manages or holds a grant on, by name."""
        with self._store.transaction() as repos:
            views = [self._view(repos, actor, bundle) for bundle in repos.bundles.list()]
        return [view for view in views if view is not None]

    def get(self, name: str, *, actor: Actor) -> BundleView:
        """``NotFound`` also for a bundle ``actor`` neither manages nor holds a grant on."""
        with self._store.transaction() as repos:
            view = self._view(repos, actor, repos.bundles.get(name))
        if view is None:
            raise NotFound("resource bundle", name)
        return view

    def create(
        self,
        name: str,
        *,
        actor: Actor,
        description: str | None = None,
        quota: Quota = Quota(),
        data_roots: Sequence[str] = (),
        spark_conf: SparkConfPolicy = SparkConfPolicy(),
    ) -> BundleView:
        """A new bundle; with no data roots its jobs may name no path, dataset or checkpoint
        until someone gives it some."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        errors = name_errors(name, "name") + quota_errors(quota) + description_errors(description)
        roots, policy = self._checked_policy(data_roots, spark_conf, errors)
        policy = policy or SparkConfPolicy()
        with self._store.transaction() as repos:
            repos.bundles.add(
                name,
                self._clock.now(),
                description=description,
                quota=quota,
                data_roots=roots,
                spark_conf_allowed=policy.allowed,
                spark_conf_refused=policy.refused,
            )
            self._audit_configuration(repos, actor, "bundle.created", name)
        return self.get(name, actor=actor)

    def update(
        self,
        name: str,
        *,
        actor: Actor,
        description: str | None,
        quota: Quota,
        data_roots: Sequence[str] | None = None,
        spark_conf: SparkConfPolicy | None = None,
        expected_version: int | None = None,
    ) -> BundleView:
        """Set the bundle's description and quotas, and its data roots and Spark setting policy
        when given (None keeps them). Lowering a quota or taking a root away stops nothing
        running; it refuses the next Run or change that would not fit. With
        ``expected_version``, only if the bundle is still at that version: ``Conflict`` if
        someone changed it since."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        errors = quota_errors(quota) + description_errors(description)
        roots, policy = self._checked_policy(data_roots, spark_conf, errors)
        with self._store.transaction() as repos:
            repos.bundles.update(
                name,
                description=description,
                quota=quota,
                data_roots=roots,
                spark_conf_allowed=None if policy is None else policy.allowed,
                spark_conf_refused=None if policy is None else policy.refused,
                expected_version=expected_version,
            )
            self._audit_configuration(repos, actor, "bundle.configured", name)
        return self.get(name, actor=actor)

    def set_policy(
        self,
        name: str,
        *,
        actor: Actor,
        data_roots: Sequence[str],
        spark_conf: SparkConfPolicy,
        expected_version: int | None = None,
    ) -> BundleView:
        """Replace the bundle's data roots and Spark setting policy, keeping its description
        and quotas; with ``expected_version`` as ``update``."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        roots, policy = self._checked_policy(data_roots, spark_conf, [])
        policy = policy or SparkConfPolicy()
        with self._store.transaction() as repos:
            repos.bundles.set_policy(
                name,
                data_roots=roots,
                spark_conf_allowed=policy.allowed,
                spark_conf_refused=policy.refused,
                expected_version=expected_version,
            )
            self._audit_configuration(repos, actor, "bundle.configured", name)
        return self.get(name, actor=actor)

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> None:
        """Delete an empty bundle (its grants and secrets go with it); with
        ``expected_version``, only if it is still at that version."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        with self._store.transaction() as repos:
            repos.bundles.get(name)
            jobs = repos.jobs.count_in_bundle(name)
            if jobs:
                raise Conflict(
                    f"resource bundle {name!r} still holds {jobs} job(s); move or delete them first"
                )
            repos.bundles.delete(name, expected_version=expected_version)
            self._audit(repos, actor, "bundle.deleted", name, {})

    def set_grants(
        self,
        name: str,
        grants: Collection[BundleGrant],
        *,
        actor: Actor,
        expected_version: int | None = None,
    ) -> BundleView:
        """Replace every grant of the bundle; each subject must exist. The grants are part of
        the bundle's version, like its quotas: with ``expected_version``, only if the bundle is
        still at it."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        with self._store.transaction() as repos:
            repos.bundles.bump(name, expected_version=expected_version)
            for index, grant in enumerate(grants):
                if grant.bundle != name:
                    raise InvalidInput(
                        [FieldError(f"grants[{index}]", "belongs to another bundle")]
                    )
                require_subject(repos, grant.subject, f"grants[{index}].subject")
            before = set(repos.grants.bundle_grants(bundle=name))
            repos.grants.set_bundle_grants(name, grants)
            after = set(grants)
            for action, changed in (("granted", after - before), ("revoked", before - after)):
                for grant in sorted(changed, key=str):
                    detail = {"subject": str(grant.subject), "permission": str(grant.permission)}
                    self._audit(repos, actor, f"bundle.{action}", name, detail)
        return self.get(name, actor=actor)

    def node_types(self) -> builtins.list[NodeTypeRecord]:
        """Every node type, smallest first (anyone may read them)."""
        with self._store.transaction() as repos:
            return repos.node_types.list()

    def put_node_type(
        self, name: str, *, cores: int, memory_mb: int, actor: Actor
    ) -> tuple[NodeTypeRecord, bool]:
        """Create or resize a node type (admins only); True if it was created. A resize counts
        for the applications started after it."""
        require_admin(actor.principal, "defining node types")
        errors = name_errors(name, "name")
        if not 1 <= cores <= MAX_CORES:
            errors.append(FieldError("cores", f"must be between 1 and {MAX_CORES}"))
        if not 1 <= memory_mb <= MAX_MEMORY_MB:
            errors.append(FieldError("memoryMb", f"must be between 1 and {MAX_MEMORY_MB}"))
        if errors:
            raise InvalidInput(errors)
        with self._store.transaction() as repos:
            created = repos.node_types.put(name, cores=cores, memory_mb=memory_mb)
            action = "node-type.created" if created else "node-type.configured"
            detail = {"cores": cores, "memoryMb": memory_mb}
            audit(repos, self._clock, actor, action, kind="node-type", name=name, detail=detail)
            return repos.node_types.get(name), created

    def delete_node_type(self, name: str, *, actor: Actor) -> None:
        """Delete a node type no job uses (admins only)."""
        require_admin(actor.principal, "deleting node types")
        with self._store.transaction() as repos:
            repos.node_types.get(name)
            users = sorted(
                job
                for job, manifest in repos.jobs.manifests_mentioning(f'"{name}"').items()
                if name
                in (
                    manifest["spec"]["instance"].get("driver"),
                    manifest["spec"]["instance"].get("executor"),
                )
            )
            if users:
                raise Conflict(f"node type {name!r} is used by job(s) {', '.join(users)}")
            repos.node_types.delete(name)
            audit(
                repos,
                self._clock,
                actor,
                "node-type.deleted",
                kind="node-type",
                name=name,
                detail={},
            )

    def _view(self, repos: Repositories, actor: Actor, bundle: BundleRecord) -> BundleView | None:
        manager = has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        mine = grants_for(repos, actor)
        held = bundle_permissions(actor.principal, mine, bundle.name)
        if not manager and not held:
            return None
        grants = (
            repos.grants.bundle_grants(bundle=bundle.name)
            if manager
            else [grant for grant in mine if grant.bundle == bundle.name]
        )
        return BundleView(
            bundle=bundle,
            in_use=repos.applications.demand_in_bundle(bundle.name),
            jobs=repos.jobs.count_in_bundle(bundle.name),
            grants=tuple(grants),
            held=held,
        )

    def _checked_policy(
        self,
        data_roots: Sequence[str] | None,
        spark_conf: SparkConfPolicy | None,
        errors: builtins.list[FieldError],
    ) -> tuple[tuple[str, ...] | None, SparkConfPolicy | None]:
        """The roots in normal form and the policy stripped (None stays None); ``InvalidInput``
        with ``errors`` and every error of either."""
        errors = list(errors)
        roots = policy = None
        try:
            if data_roots is not None:
                roots = checked_data_roots(data_roots, protected=self._protected_roots)
        except InvalidInput as error:
            errors.extend(error.errors)
        try:
            if spark_conf is not None:
                policy = checked_spark_conf_policy(spark_conf.allowed, spark_conf.refused)
        except InvalidInput as error:
            errors.extend(error.errors)
        if errors:
            raise InvalidInput(errors)
        return roots, policy

    def _audit_configuration(
        self, repos: Repositories, actor: Actor, action: str, name: str
    ) -> None:
        """Audit the bundle's quotas, data roots and Spark setting policy as now written."""
        self._audit(repos, actor, action, name, configuration_detail(repos.bundles.get(name)))

    def _audit(
        self,
        repos: Repositories,
        actor: Actor,
        action: str,
        name: str,
        detail: Mapping[str, object],
    ) -> None:
        audit(repos, self._clock, actor, action, kind="bundle", name=name, detail=dict(detail))


def description_errors(description: str | None) -> builtins.list[FieldError]:
    """A description may span lines but holds no other control character."""
    error = text_error(description, path="description", multi_line=True) if description else None
    return [] if error is None else [error]


def quota_errors(quota: Quota) -> builtins.list[FieldError]:
    """Each quota, when set, is a whole number of at least 0 (0: nothing may run)."""
    errors = []
    for path, value, limit in (
        ("quota.maxRunningApplications", quota.max_running_applications, 1_000_000),
        ("quota.maxCores", quota.max_cores, MAX_CORES),
        ("quota.maxMemoryMb", quota.max_memory_mb, MAX_MEMORY_MB),
    ):
        if value is not None and not 0 <= value <= limit:
            errors.append(FieldError(path, f"must be between 0 and {limit}, or null for no limit"))
    return errors


def configuration_detail(bundle: BundleRecord) -> dict[str, object]:
    """What an audit entry of a bundle's change records: its quotas, data roots and Spark
    setting policy."""
    quota = bundle.quota
    return {
        "maxRunningApplications": quota.max_running_applications,
        "maxCores": quota.max_cores,
        "maxMemoryMb": quota.max_memory_mb,
        "dataRoots": None if bundle.data_roots is None else list(bundle.data_roots),
        "sparkConf": {
            "allowed": list(bundle.spark_conf_allowed),
            "refused": list(bundle.spark_conf_refused),
        },
    }


def seed_default_data_roots(
    store: Store, candidates: Sequence[str], *, protected_roots: Sequence[str]
) -> tuple[str, ...] | None:
    """Give the ``default`` bundle data roots if it exists and has never had any: the
    ``candidates`` in normal form, once each, less those no bundle may hold (under the
    server's home, say), each of which is logged. The roots given, or None if none were."""
    roots: builtins.list[str] = []
    for candidate in candidates:
        problem = data_root_problem(candidate, protected=protected_roots)
        if problem is not None:
            log.warning("the default bundle does not get the data root %s: %s", candidate, problem)
        elif (root := normalized_uri(candidate)) not in roots:
            roots.append(root)
    with store.transaction() as repos:
        seeded = repos.bundles.seed_data_roots(DEFAULT_BUNDLE, roots)
    return tuple(roots) if seeded else None
