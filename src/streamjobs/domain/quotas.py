"""Resource quotas of a bundle: what a job needs to run, and whether starting it fits.

A bundle may cap its running applications, their total cores and their total memory (drivers and
executors together). An application counts from Run until it ends or is suspended; its restarts
are the same application and never count twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from streamjobs.domain.errors import Conflict


@dataclass(frozen=True)
class NodeSize:
    cores: int
    memory_mb: int


@dataclass(frozen=True)
class Demand:
    """What running applications take: how many, their cores and their memory."""

    applications: int = 0
    cores: int = 0
    memory_mb: int = 0

    def __add__(self, other: Demand) -> Demand:
        return Demand(
            self.applications + other.applications,
            self.cores + other.cores,
            self.memory_mb + other.memory_mb,
        )


@dataclass(frozen=True)
class Quota:
    """A bundle's limits; None means no limit."""

    max_running_applications: int | None = None
    max_cores: int | None = None
    max_memory_mb: int | None = None


class QuotaExceeded(Conflict):
    """Starting an application would take a bundle over one of its quotas."""

    title = "Quota exceeded"


def application_demand(
    *,
    driver: str,
    executor: str | None,
    executors: int | None,
    node_types: Mapping[str, NodeSize],
    standby: bool = False,
) -> Demand:
    """One application's demand: its driver (twice with a ``standby`` driver held ready), and
    ``executors`` executors of the ``executor`` node type (the maximum under dynamic
    allocation); a single-node job has none."""
    driver_size = node_types[driver]
    drivers = 2 if standby else 1
    cores, memory = drivers * driver_size.cores, drivers * driver_size.memory_mb
    if executor is not None and executors:
        executor_size = node_types[executor]
        cores += executors * executor_size.cores
        memory += executors * executor_size.memory_mb
    return Demand(applications=1, cores=cores, memory_mb=memory)


def check_quota(bundle: str, quota: Quota, in_use: Demand, starting: Demand) -> None:
    """``QuotaExceeded`` naming the quota and the figures if ``starting`` on top of ``in_use``
    goes over ``quota``; the first quota broken is named, with every figure of it."""
    total = in_use + starting
    limits = (
        (
            "running applications",
            quota.max_running_applications,
            in_use.applications,
            starting.applications,
            total.applications,
            "",
        ),
        ("cores", quota.max_cores, in_use.cores, starting.cores, total.cores, ""),
        (
            "memory",
            quota.max_memory_mb,
            in_use.memory_mb,
            starting.memory_mb,
            total.memory_mb,
            " MB",
        ),
    )
    for name, limit, used, wanted, after, unit in limits:
        if limit is not None and after > limit:
            raise QuotaExceeded(
                f"resource bundle {bundle!r} quota of {limit}{unit} {name} would be exceeded: "
                f"{used}{unit} in use, this run needs {wanted}{unit} more ({after}{unit} in all)"
            )
