"""Fields a manifest may spell but this server cannot honour, and deployments it cannot run.

The manifest keeps the Kubernetes fields (``application.image``, ``instance.volume``,
``configuration.configMaps``) so that a manifest written for a Kubernetes deployment parses, but
there is no Kubernetes backend yet: a job that sets one is refused rather than run without it. A
python or jvm program manages its own delivery guarantee, so ``processing.guarantee`` belongs to
pipelines only. And ``deployment: standard`` needs a Spark standalone master, which only the
server's settings can give; Run checks it against the deployments the server can launch, and
against the settings that would leave a cluster on other hosts unable to reach the server or its
drivers (``cluster_addresses``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import (
    ApplicationType,
    Deployment,
    JobSpec,
    StreamingJob,
    TriggerMode,
)

STANDALONE_MASTER_SETTING = "STREAMJOBS_SPARK_MASTER"
"""The server setting that gives it a standalone master, and with it ``deployment: standard``."""
NEEDS_KUBERNETES = (
    "needs the Kubernetes deployment, which this version of streamjobs does not have yet "
    "(drivers run on this machine); remove it"
)
PROGRAM_GUARANTEE = (
    "python/jvm jobs manage their own delivery guarantee (their own checkpoints and sinks); "
    "processing.guarantee is for pipelines: remove it"
)


def unsupported_field_errors(spec: JobSpec) -> Iterator[FieldError]:
    """The fields ``spec`` sets that would do nothing on this server."""
    if spec.application.image is not None:
        yield FieldError("spec.application.image", f"a container image {NEEDS_KUBERNETES}")
    if spec.instance.volume is not None:
        yield FieldError("spec.instance.volume", f"a volume {NEEDS_KUBERNETES}")
    if spec.configuration.config_maps:
        yield FieldError("spec.configuration.configMaps", f"config maps {NEEDS_KUBERNETES}")
    yield from instance_errors(spec)
    yield from standby_errors(spec)
    is_program = spec.application.type is not ApplicationType.PIPELINE
    if is_program and spec.processing.guarantee is not None:
        yield FieldError("spec.processing.guarantee", PROGRAM_GUARANTEE)


def instance_errors(spec: JobSpec) -> Iterator[FieldError]:
    """Executor and deploy-mode fields that do not fit the deployment or each other."""
    instance = spec.instance
    path = "spec.instance"
    if instance.deployment is not Deployment.STANDARD:
        for field, value in (
            ("deployMode", instance.deploy_mode),
            ("minExecutors", instance.min_executors),
            ("initialExecutors", instance.initial_executors),
        ):
            if value is not None:
                yield FieldError(
                    f"{path}.{field}",
                    f"is for deployment standard only; this job is {instance.deployment}",
                )
        return
    if not instance.dynamic:
        for field, value in (
            ("minExecutors", instance.min_executors),
            ("initialExecutors", instance.initial_executors),
        ):
            if value is not None:
                yield FieldError(
                    f"{path}.{field}", "needs dynamic allocation: set spec.instance.dynamic: true"
                )
        return
    most = instance.executors or 1
    fewest = instance.min_executors or 0
    if fewest > most:
        yield FieldError(
            f"{path}.minExecutors",
            f"{fewest} is more than spec.instance.executors ({most}), the most there may be",
        )
    initial = instance.initial_executors
    if initial is not None and not fewest <= initial <= most:
        yield FieldError(
            f"{path}.initialExecutors",
            f"{initial} is not between minExecutors ({fewest}) and executors ({most})",
        )


def standby_errors(spec: JobSpec) -> Iterator[FieldError]:
    """Where a standby driver cannot be kept: it holds a pipeline's queries until promoted,
    which a python or jvm program cannot do, nor a batch or finite run (nothing to keep
    running), and it waits on this server's host, where a cluster-mode driver does not run."""
    if not spec.instance.standby:
        return
    path = "spec.instance.standby"
    pipeline = spec.pipeline
    if spec.application.type is not ApplicationType.PIPELINE or pipeline is None:
        yield FieldError(
            path,
            f"a standby driver is for pipelines, whose runner holds its queries until it is "
            f"promoted; a {spec.application.type} program starts its own: remove it",
        )
    elif pipeline.batch_mode or pipeline.streaming.trigger_mode in _FINITE_TRIGGERS:
        yield FieldError(
            path,
            "a standby driver keeps a stream running; a batch or finite (Once, AvailableNow) "
            "run has nothing to take over: remove it",
        )
    if spec.instance.in_cluster_mode:
        yield FieldError(
            path,
            "a standby driver waits on the server's host, and a cluster-mode driver runs on a "
            "worker: use deployMode client, or remove it",
        )


_FINITE_TRIGGERS = frozenset({TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW})


def standard_deployment_missing() -> str:
    """Why a server without a standalone master cannot run ``deployment: standard``."""
    return (
        "deployment standard runs executors on a Spark standalone cluster, and this server has "
        f"no standalone master configured: set {STANDALONE_MASTER_SETTING}=spark://host:port "
        "for the server and restart it, or use deployment: singleNode"
    )


def deployment_errors(job: StreamingJob, available: Collection[Deployment]) -> list[FieldError]:
    """Why ``job`` cannot run on a server that launches the ``available`` deployments."""
    deployment = job.spec.instance.deployment
    if deployment in available:
        return []
    path = "spec.instance.deployment"
    if deployment is Deployment.STANDARD:
        return [FieldError(path, standard_deployment_missing())]
    return [FieldError(path, f"this server cannot run deployment {deployment}")]


def cluster_settings_errors(job: StreamingJob, problems: Sequence[str]) -> list[FieldError]:
    """Why ``job`` cannot run while the server's cluster settings have ``problems``
    (``cluster_addresses.cluster_address_problems``): a standard job's driver and executors
    would not reach each other or the server; singleNode jobs run on this machine alone."""
    if job.spec.instance.deployment is not Deployment.STANDARD:
        return []
    return [
        FieldError(
            "spec.instance.deployment",
            f"this server cannot run deployment standard as it is configured: {problem}; "
            "then restart the server",
        )
        for problem in problems
    ]
