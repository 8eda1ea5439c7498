"""The Spark settings a job's driver starts with, derived from its manifest and connections.

One function computes them for both ways a driver starts: the launcher puts them on the
``spark-submit`` command line, and the runner, when run in-process (``streamjobs pipeline run``,
tests), starts its session with them. Secret values are never among them: secrets reach the
driver through its environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from streamjobs.domain.connections import Connection
from streamjobs.domain.connectors import (
    local_jars_for,
    maven_repository_path,
    packages_for,
    spark_conf_for,
)
from streamjobs.domain.datasets import iceberg_catalogs
from streamjobs.domain.manifest import StateStore, StreamingJob

REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key|jaas|credential|url"
"""Option and setting names whose values Spark masks in plans, logs and its UI."""
OPTIONS_REDACTION_SETTING = "spark.sql.redaction.options.regex"
DELTA_SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
"""Delta reads its log with this many tasks (50 by default, made for clusters, slow on one
machine); a single-node driver uses one per core unless the job sets it."""
SCHEDULER_MODE_SETTING = "spark.scheduler.mode"
FAIR_SCHEDULING = {SCHEDULER_MODE_SETTING: "FAIR"}
"""A pipeline runs each output's query in a scheduler pool of its own (``runner.pools``), so one
slow output does not hold back the others' tasks."""
STATE_STORE_PROVIDER_SETTING = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB_STATE_STORE = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
CHANGELOG_CHECKPOINTING_SETTING = (
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
)
ROCKSDB_SETTINGS = {
    STATE_STORE_PROVIDER_SETTING: ROCKSDB_STATE_STORE,
    CHANGELOG_CHECKPOINTING_SETTING: "true",
}
"""``processing.stateStore: rocksdb``: state in RocksDB off the JVM heap, each batch
checkpointing only the changes it made (a changelog) rather than uploading the store."""
_LOCAL_MASTER = re.compile(r"local\[(\d+)(?:,\d+)?\]|local")


def formats_of(job: StreamingJob) -> tuple[str, ...]:
    """The input and output formats a pipeline uses, once each, in the manifest's order.

    An order that does not change between processes keeps the packages a job asks Spark for, and
    the stamp of their resolution, the same for the same manifest.
    """
    pipeline = job.spec.pipeline
    if pipeline is None:
        return ()
    named = [str(source.format) for source in pipeline.inputs]
    named += [str(sink.format) for sink in pipeline.outputs]
    return tuple(dict.fromkeys(named))


def local_cores(master: str | None) -> int | None:
    """The cores of a ``local[N]`` master, 1 for ``local``; None for others (and ``local[*]``)."""
    match = _LOCAL_MASTER.fullmatch(master or "")
    if match is None:
        return None
    return int(match.group(1) or 1)


def session_conf(
    job: StreamingJob,
    *,
    connections: Iterable[Connection],
    maven_repository: PurePath,
    cores: int | None = None,
) -> dict[str, str]:
    """Every Spark setting the job's driver needs, the job's own ``sparkConf`` last: a setting
    derived from the manifest (the state store, the scheduler mode) is a default the job may
    change there, as Spark's own defaults are.

    ``maven_repository`` is the local Maven repository holding the jars the resolver cannot
    fetch; ``cores`` the driver's cores when it runs alone (``local[N]``).
    """
    formats = formats_of(job)
    conf = {
        "spark.app.name": f"streamjobs:{job.name}",
        "spark.redaction.regex": REDACTION_REGEX,
        OPTIONS_REDACTION_SETTING: REDACTION_REGEX,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        **spark_conf_for(formats, job.spec.dependencies.packages),
    }
    if job.spec.pipeline is not None:
        conf.update(FAIR_SCHEDULING)
    if job.spec.processing.state_store is StateStore.ROCKSDB:
        conf.update(ROCKSDB_SETTINGS)
    if "delta" in formats and cores is not None:
        conf[DELTA_SNAPSHOT_PARTITIONS] = str(cores)
    if "iceberg" in formats:
        conf.update(iceberg_catalogs(connections))
    packages = packages_for(formats, job.spec.dependencies.packages)
    if packages:
        conf["spark.jars.packages"] = ",".join(packages)
    local_jars = local_maven_jars(formats, maven_repository, job.spec.dependencies.packages)
    jars = [*local_jars, *job.spec.dependencies.jars]
    if jars:
        conf["spark.jars"] = ",".join(jars)
    conf.update(job.spec.configuration.spark_conf)
    return conf


def local_maven_jars(
    formats: Iterable[str], maven_repository: PurePath, packages: Iterable[str] = ()
) -> list[str]:
    """Connector jars taken from the local Maven repository rather than through the resolver,
    for ``formats`` and the connectors a job names in ``packages``."""
    coordinates = local_jars_for(formats, packages)
    return [str(maven_repository / maven_repository_path(c)) for c in coordinates]
