"""Fields a manifest may spell but this server cannot honour, and deployments it cannot run.

The manifest keeps the Kubernetes fields (``application.image``, ``instance.volume``,
``configuration.configMaps``) so that a manifest written for a Kubernetes deployment parses, but
there is no Kubernetes backend yet: a job that sets one is refused rather than run without it. A
python or jvm program manages its own delivery guarantee, so ``processing.guarantee`` belongs to
pipelines only. And ``deployment: standard`` needs a Spark standalone master, which only the
server's settings can give; Run checks it against the deployments the server can launch.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import ApplicationType, Deployment, JobSpec, StreamingJob

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
    is_program = spec.application.type is not ApplicationType.PIPELINE
    if is_program and spec.processing.guarantee is not None:
        yield FieldError("spec.processing.guarantee", PROGRAM_GUARANTEE)


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
