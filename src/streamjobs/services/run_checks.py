"""What a job needs at Run that only the store knows, checked before anything starts.

A job is checked when it is written, but what it names can be missing at Run: a secret its
bundle lacks (a job may be applied before its secrets), a connection or a node type deleted
since, a connection changed to a type that no longer fits. Each would fail every submission the
same way, so Run and Resume refuse with a 409 naming each field (``CannotRun``) rather than
start a retry loop, as they refuse a job whose jars failed to resolve lately (``jar_refusals``)
and one that does not fit its bundle's quotas (``reserve_demand``). The supervisor looks for the
secrets again at each attempt (``supervisor.attempts``): they can go while a job runs. A Run
(not a Resume) is also refused when it would start from the job's ``initialSnapshotName`` and
the job has no READY snapshot of that name (``initial_snapshot_refusals``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streamjobs.domain.connections import connections_used, dataset_errors
from streamjobs.domain.errors import CannotRun, Conflict, FieldError
from streamjobs.domain.jar_requests import JarRequest, jar_request
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.quotas import Demand, application_demand, check_quota
from streamjobs.domain.secrets import (
    SecretUse,
    connection_secret_uses,
    env_secret_uses,
    spark_conf_secret_uses,
)
from streamjobs.domain.snapshots import SnapshotStatus
from streamjobs.services.connections import stored_connections
from streamjobs.services.job_references import node_type_fields
from streamjobs.services.snapshot_starts import initial_snapshot
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


def initial_snapshot_refusals(
    repos: Repositories, job: StreamingJob, *, checkpoint_root: str
) -> list[FieldError]:
    """The ``initialSnapshotName`` a Run would start from when the job has no READY snapshot
    of that name; nothing when the checkpoint holds state (the name is not used then)."""
    name = initial_snapshot(job, checkpoint_root)
    if name is None:
        return []
    found = repos.snapshots.find(job.name, name)
    if found is not None and found.status is SnapshotStatus.READY:
        return []
    missing = f"no snapshot named {name!r} of job {job.name!r}"
    if found is not None:
        missing += f" is ready (it is {found.status})"
    return [FieldError("spec.processing.initialSnapshotName", missing)]


def jar_refusals(
    job: StreamingJob, jar_failures: Callable[[JarRequest], str | None] | None
) -> list[FieldError]:
    """The package whose resolution failed lately (any of the job's when none is named), as
    ``jar_failures`` tells (``launch.jars``)."""
    failure = jar_failures(jar_request(job)) if jar_failures else None
    if failure is None:
        return []
    packages = job.spec.dependencies.packages
    named = [index for index, package in enumerate(packages) if package in failure]
    path = f"spec.dependencies.packages[{named[0]}]" if named else "spec.dependencies"
    return [FieldError(path, f"resolving the job's jars failed: {failure}")]


def reserve_demand(repos: Repositories, bundle: str, spec: dict[str, Any]) -> Demand:
    """What an application of ``spec`` takes, after checking it fits the bundle's quotas.

    The bundle is locked first, so concurrent Runs in one bundle are counted one after the
    other. Only running applications count (a suspended one being resumed does not yet).
    """
    repos.bundles.lock(bundle)
    instance = spec["spec"]["instance"]
    sizes = repos.node_types.sizes()
    standard = instance["deployment"] == "standard"
    for role in ("driver", "executor") if standard else ("driver",):
        if instance.get(role) not in sizes:
            raise Conflict(
                f"spec.instance.{role}: node type {instance.get(role)!r} no longer exists; "
                "configure the job with one that does"
            )
    demand = application_demand(
        driver=instance["driver"],
        executor=instance.get("executor") if standard else None,
        executors=instance.get("executors"),
        node_types=sizes,
        standby=bool(instance.get("standby")),
    )
    check_quota(
        bundle, repos.bundles.get(bundle).quota, repos.applications.demand_in_bundle(bundle), demand
    )
    return demand


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
