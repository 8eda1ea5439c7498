"""Where a job runs: ``spec.instance``. Its deployment (everything in the driver, or executors on
a standalone cluster), the driver's deploy mode (on the server's host, or on a worker), node
types and the executors' count, fixed or dynamic."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import Field, model_validator

from streamjobs.domain.formats import AbsolutePath, KubernetesQuantity, ReferenceName
from streamjobs.domain.manifest_model import JavaInt, ManifestModel

DEFAULT_EXECUTOR_NODE_TYPE = "medium"


class Deployment(StrEnum):
    """singleNode runs everything in the driver (local[N]); standard adds executors."""

    SINGLE_NODE = "singleNode"
    STANDARD = "standard"


class DeployMode(StrEnum):
    """Where a standard job's driver runs: ``client`` on the server's host (in its sandbox),
    ``cluster`` on one of the standalone cluster's workers, submitted through the master's REST
    submission server (Spark's ``spark.submit.deployMode``)."""

    CLIENT = "client"
    CLUSTER = "cluster"


class Volume(ManifestModel):
    """A volume of ``size`` mounted into the job's containers at ``mountPath``."""

    size: KubernetesQuantity
    mount_path: AbsolutePath


class Instance(ManifestModel):
    """Where the job runs. ``executor``, ``executors``, ``dynamic`` and ``deployMode`` are for
    ``standard`` only; there they default to the ``medium`` node type, one executor, no dynamic
    allocation and ``client`` mode. ``minExecutors`` and ``initialExecutors`` need ``dynamic``
    (``deployment_rules``)."""

    deployment: Deployment = Deployment.SINGLE_NODE
    deploy_mode: DeployMode | None = None
    """Where the driver runs (standard only): client (default) or cluster."""
    driver: ReferenceName = "small"
    """Node type of the driver."""
    executor: ReferenceName | None = None
    """Node type of each executor."""
    executors: JavaInt | None = Field(default=None, ge=1)
    """Number of executors; with dynamic allocation, the most there may be (and what the
    bundle's quota counts)."""
    dynamic: bool | None = None
    """Dynamic allocation of executors (with shuffle tracking): their number follows the work,
    between ``minExecutors`` and ``executors``."""
    min_executors: JavaInt | None = Field(default=None, ge=0)
    """With dynamic allocation, the fewest executors kept (default 0)."""
    initial_executors: JavaInt | None = Field(default=None, ge=0)
    """With dynamic allocation, how many executors the driver asks for first (default
    ``minExecutors``)."""
    standby: bool = False
    """Keep a second driver started and held ready (JVM, Spark session and connectors loaded,
    queries not started), promoted when the active driver dies: recovery without a cold start.
    Quotas count its driver too (``deployment_rules``: pipelines on this server's host only)."""
    volume: Volume | None = None
    """For a Kubernetes deployment, which this version does not have; refused."""

    @model_validator(mode="after")
    def _fill_standard_defaults(self) -> Self:
        if self.deployment is Deployment.STANDARD:
            self.executor = self.executor or DEFAULT_EXECUTOR_NODE_TYPE
            self.executors = self.executors or 1
            self.dynamic = bool(self.dynamic)
            self.deploy_mode = self.deploy_mode or DeployMode.CLIENT
        return self

    @property
    def in_cluster_mode(self) -> bool:
        """Whether the driver runs on a worker of the standalone cluster."""
        return self.deploy_mode is DeployMode.CLUSTER
