"""What a job's manifest refers to that only the store can check: its bundle, its node types,
the connections of its datasets (and that their types fit the formats), the notification
destinations of its subscriptions, the user or service
account it runs as, and what its bundle allows: the Spark settings of its policy and the data
roots every path, dataset and checkpoint must lie under. ``JobService`` checks them in the
transaction that writes the job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streamjobs.domain.access import Actor, PrincipalKind, require_run_as
from streamjobs.domain.connections import Connection, connections_used, dataset_errors
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound
from streamjobs.domain.job_locations import (
    JobLocation,
    foreign_code_errors,
    job_locations,
    location_errors,
)
from streamjobs.domain.spark_policy import bundle_spark_conf_errors
from streamjobs.domain.spec import StreamingJob
from streamjobs.services.connections import stored_connections
from streamjobs.services.destination_references import destination_errors
from streamjobs.store.db import Repositories


@dataclass(frozen=True)
class ServerPlaces:
    """Where the server keeps its own things, as far as a job's locations are concerned."""

    checkpoint_root: str
    """Where it derives checkpoints of jobs that set none."""
    protected_roots: Sequence[str]
    """Locations no job may reach (its home), as URIs."""


def check_references(
    job: StreamingJob,
    repos: Repositories,
    *,
    places: ServerPlaces,
    source: str | None,
    lock_connections: bool = True,
    bundle_rules: bool = True,
) -> list[JobLocation]:
    """``InvalidInput`` naming each bundle, node type and connection the job refers to that does
    not exist, each connection whose type does not fit the format it is used with, each Spark
    setting its bundle's policy refuses and each location its bundle does not allow; otherwise
    the job's locations.

    ``lock_connections`` keeps the connections read from changing until the transaction ends
    (a job being written must not be stored with a connection changed under it);
    ``bundle_rules`` False leaves out what the bundle allows (locations, Spark policy) and
    returns no locations."""
    errors = []
    try:
        bundle = repos.bundles.get(job.spec.bundle)
    except NotFound:
        bundle = None
        known = ", ".join(sorted(b.name for b in repos.bundles.list())) or "none"
        errors.append(
            FieldError(
                "spec.bundle",
                f"resource bundle {job.spec.bundle!r} does not exist (known: {known})",
            )
        )
    for path, node_type in node_type_fields(job):
        if repos.node_types.find(node_type) is None:
            known = ", ".join(sorted(n.name for n in repos.node_types.list()))
            errors.append(
                FieldError(path, f"node type {node_type!r} does not exist (known: {known})")
            )
    connections: dict[str, Connection] = {}
    if connections_used(job):
        connections = stored_connections(repos, lock_for_share=lock_connections)
        errors += dataset_errors(job, connections)
    errors += destination_errors(job.spec.notifications, repos, lock_for_share=lock_connections)
    if not bundle_rules:
        if errors:
            raise InvalidInput(errors, source=source)
        return []
    locations = job_locations(job, connections, checkpoint_root=places.checkpoint_root)
    if bundle is not None:
        errors += bundle_spark_conf_errors(
            job.spec.configuration,
            bundle=bundle.name,
            allowed=bundle.spark_conf_allowed,
            refused=bundle.spark_conf_refused,
        )
        errors += location_errors(
            locations,
            bundle=bundle.name,
            roots=bundle.data_roots,
            protected_roots=places.protected_roots,
        )
        others = {b.name: b.data_roots or () for b in repos.bundles.list() if b.name != bundle.name}
        errors += foreign_code_errors(locations, bundle=bundle.name, roots_of_others=others)
    if errors:
        raise InvalidInput(errors, source=source)
    return locations


def check_run_as(
    repos: Repositories, actor: Actor, run_as: str | None, *, previous: str | None
) -> None:
    """A new ``runAs`` must name an existing user or service account the actor may run as; one
    that stays as it was is left alone (the job was allowed to run as it already)."""
    if run_as is None or run_as == previous:
        return
    user = repos.users.find(run_as)
    if user is None:
        raise InvalidInput(
            [FieldError("spec.runAs", f"no user or service account is called {run_as!r}")]
        )
    service_accounts = {run_as} if user.kind is PrincipalKind.SERVICE_ACCOUNT else set()
    require_run_as(
        actor.principal,
        run_as,
        service_accounts=service_accounts,
        service_account_grants=repos.grants.service_account_grants(service_account=run_as),
    )


def node_type_fields(job: StreamingJob) -> list[tuple[str, str]]:
    instance = job.spec.instance
    fields = [("spec.instance.driver", instance.driver)]
    if instance.executor is not None:
        fields.append(("spec.instance.executor", instance.executor))
    return fields


def node_types_of(job: StreamingJob, repos: Repositories) -> dict[str, Any]:
    resolved = {}
    for path, name in node_type_fields(job):
        node_type = repos.node_types.get(name)
        role = path.rsplit(".", 1)[1]
        resolved[role] = {"name": name, "cores": node_type.cores, "memoryMb": node_type.memory_mb}
    return resolved
