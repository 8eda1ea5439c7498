"""What a job needs at Run that only the store knows, checked before anything starts.

A job is checked when it is written, but what it names can be missing at Run: a secret its
bundle lacks (a job may be applied before its secrets), a connection or a node type deleted
since, a connection changed to a type that no longer fits. Each would fail every submission the
same way, so Run and Resume refuse with a 409 naming each field (``CannotRun``) rather than
start a retry loop. The supervisor looks for the secrets again at each attempt
(``supervisor.attempts``): they can go while a job runs.
"""

from __future__ import annotations

from streamjobs.domain.connections import connections_used, dataset_errors
from streamjobs.domain.errors import CannotRun, FieldError
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.secrets import (
    SecretUse,
    connection_secret_uses,
    env_secret_uses,
    spark_conf_secret_uses,
)
from streamjobs.services.connections import stored_connections
from streamjobs.services.job_references import node_type_fields
from streamjobs.store.db import Repositories


def run_refusals(repos: Repositories, job: StreamingJob) -> list[FieldError]:
    """Each field of ``job`` that names what is missing now; empty when it can run."""
    connections = stored_connections(repos) if connections_used(job) else {}
    used = [connections[name] for name in sorted(connections_used(job)) if name in connections]
    uses = env_secret_uses(job) + spark_conf_secret_uses(job) + connection_secret_uses(used)
    return [
        *_missing_node_types(repos, job),
        *dataset_errors(job, connections),
        *_missing_secrets(repos, job.spec.bundle, uses),
    ]


def check_runnable(refusals: list[FieldError], job_name: str) -> None:
    """``CannotRun`` listing ``refusals``, if there are any."""
    if refusals:
        raise CannotRun(refusals, prefix=f"job {job_name!r} cannot run: ")


def _missing_node_types(repos: Repositories, job: StreamingJob) -> list[FieldError]:
    missing = [
        (path, name) for path, name in node_type_fields(job) if repos.node_types.find(name) is None
    ]
    if not missing:
        return []
    known = ", ".join(sorted(node.name for node in repos.node_types.list())) or "none"
    return [
        FieldError(path, f"node type {name!r} does not exist (known: {known})")
        for path, name in missing
    ]


def _missing_secrets(repos: Repositories, bundle: str, uses: list[SecretUse]) -> list[FieldError]:
    present = repos.secrets.ciphertexts(bundle, {use.secret for use in uses})
    return [
        FieldError(
            use.path,
            f"secret {use.secret!r} does not exist in resource bundle {bundle!r}; create it "
            f"with `streamjobs create secret {use.secret} --bundle {bundle} --from-file PATH`",
        )
        for use in uses
        if use.secret not in present
    ]
