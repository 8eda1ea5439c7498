"""The Spark session a pipeline runs in: connector packages, catalogs and the job's own settings.

Under ``spark-submit`` the launcher passes the same settings on the command line, and
``getOrCreate`` returns that session; run in-process (``streamjobs pipeline run``, tests), the
settings made here start it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pyspark.sql import SparkSession

from streamjobs.domain.connections import Connection
from streamjobs.domain.connectors import (
    local_jars_for,
    maven_repository_path,
    packages_for,
    spark_conf_for,
)
from streamjobs.domain.datasets import iceberg_catalogs
from streamjobs.domain.manifest import StreamingJob

REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key|jaas|credential|url"
"""Option and setting names whose values Spark masks in plans, logs and its UI."""
OPTIONS_REDACTION_SETTING = "spark.sql.redaction.options.regex"


def mask_secret_options(spark: SparkSession) -> None:
    """Make Spark mask secret-looking reader and writer options in the plans it prints."""
    spark.conf.set(OPTIONS_REDACTION_SETTING, REDACTION_REGEX)


def formats_of(job: StreamingJob) -> set[str]:
    """The input and output formats a pipeline uses."""
    pipeline = job.spec.pipeline
    if pipeline is None:
        return set()
    return {str(item.format) for item in (*pipeline.inputs, *pipeline.outputs)}


def session_conf(job: StreamingJob, *, connections: Iterable[Connection]) -> dict[str, str]:
    """Every Spark setting the job's session needs, the job's own ``sparkConf`` last."""
    formats = formats_of(job)
    conf = {
        "spark.app.name": f"streamjobs:{job.name}",
        "spark.redaction.regex": REDACTION_REGEX,
        OPTIONS_REDACTION_SETTING: REDACTION_REGEX,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        **spark_conf_for(formats),
    }
    if "iceberg" in formats:
        conf.update(iceberg_catalogs(connections))
    packages = packages_for(formats, job.spec.dependencies.packages)
    if packages:
        conf["spark.jars.packages"] = ",".join(packages)
    jars = [*local_maven_jars(formats), *job.spec.dependencies.jars]
    if jars:
        conf["spark.jars"] = ",".join(jars)
    conf.update(job.spec.configuration.spark_conf)
    return conf


def local_maven_jars(formats: Iterable[str]) -> list[str]:
    """Connector jars taken from the local Maven repository rather than through the resolver."""
    repository = Path.home() / ".m2" / "repository"
    return [str(repository / maven_repository_path(c)) for c in local_jars_for(formats)]


def build_session(
    job: StreamingJob, *, connections: Iterable[Connection], master: str | None = None
) -> SparkSession:
    """The session to run ``job`` in (the running one, when there is one)."""
    builder = SparkSession.builder
    if master:
        builder = builder.master(master)
    for key, value in session_conf(job, connections=connections).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if job.spec.pipeline is not None:
        spark.sparkContext.setLogLevel(str(job.spec.pipeline.log_level))
    return spark
