"""What a job's manifest refers to that only the store can check: its bundle, its node types,
the connections of its datasets (and that their types fit the formats), and the user or service
account it runs as. ``JobService`` checks them in the transaction that writes the job.
"""

from __future__ import annotations

from typing import Any

from streamjobs.domain.access import Actor, PrincipalKind, require_run_as
from streamjobs.domain.connections import connections_used, dataset_errors
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import StreamingJob
from streamjobs.services.connections import stored_connections
from streamjobs.store.db import Repositories


def check_references(
    job: StreamingJob, repos: Repositories, *, source: str | None, lock_connections: bool = True
) -> None:
    """``InvalidInput`` naming each bundle, node type and connection the job refers to that does
    not exist, and each connection whose type does not fit the format it is used with.

    ``lock_connections`` keeps the connections read from changing until the transaction ends
    (a job being written must not be stored with a connection changed under it)."""
    errors = []
    if not repos.bundles.exists(job.spec.bundle):
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
    if connections_used(job):
        errors += dataset_errors(job, stored_connections(repos, lock_for_share=lock_connections))
    if errors:
        raise InvalidInput(errors, source=source)


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
