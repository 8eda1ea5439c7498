"""The Spark settings of a standard job's executors on a standalone cluster: their size, their
count, and with dynamic allocation how their number follows the load.

The sizes and counts are the server's (the bundle's quota counts them from ``spec.instance``;
``domain.spark_policy`` refuses them in ``sparkConf``); how fast dynamic allocation adds and
gives back executors is the job's to tune, from the defaults here.
"""

from __future__ import annotations

from streamjobs.launch.base import AttemptSpec, LaunchFailed

DYNAMIC_ALLOCATION_DEFAULTS = {
    "spark.dynamicAllocation.executorIdleTimeout": "30s",
    "spark.dynamicAllocation.shuffleTracking.timeout": "120s",
}
"""How soon dynamic allocation gives back an idle executor, which a job may change in its
``sparkConf`` (``domain.spark_policy.JOB_DYNAMIC_ALLOCATION_SETTINGS``). Spark's own defaults
(60 s; and for an executor holding shuffle files, never until they are cleaned up, which a
streaming driver does rarely) would keep a streaming job's executors long after its load fell:
the shuffle files of a finished micro-batch are not read again."""


def executor_settings(attempt: AttemptSpec) -> dict[str, str]:
    """Executor sizes and counts of a standard job on a standalone cluster. With dynamic
    allocation ``executors`` is the most there may be (and ``spark.cores.max`` counts them all,
    as the bundle's quota does): Spark asks for ``initialExecutors`` first, adds executors while
    tasks wait, gives idle ones back down to ``minExecutors``, and tracks shuffle files itself
    (a standalone cluster has no external shuffle service)."""
    instance = attempt.job.spec.instance
    executor = attempt.executor
    if executor is None:
        raise LaunchFailed(
            f"job {attempt.job.name!r} is a standard deployment but its attempt has no "
            "executor node size (spec.instance.executor)"
        )
    executors = instance.executors or 1
    settings = {
        "spark.executor.cores": str(executor.cores),
        "spark.executor.memory": f"{executor.memory_mb}m",
        "spark.cores.max": str(executor.cores * executors),
    }
    if instance.dynamic:
        fewest = instance.min_executors or 0
        initial = fewest if instance.initial_executors is None else instance.initial_executors
        settings.update(
            {
                "spark.dynamicAllocation.enabled": "true",
                "spark.dynamicAllocation.shuffleTracking.enabled": "true",
                "spark.dynamicAllocation.minExecutors": str(fewest),
                "spark.dynamicAllocation.initialExecutors": str(initial),
                "spark.dynamicAllocation.maxExecutors": str(executors),
            }
        )
    return settings
