"""The Spark session a pipeline runs in: connector packages, catalogs and the job's own settings.

Under ``spark-submit`` the launcher passes the same settings (``domain.spark_conf``) on the
command line, and ``getOrCreate`` returns that session; run in-process (``streamjobs pipeline
run``, tests), the settings made here start it.

The session's settings are set over those of the JVM that ``spark-submit`` started: a setting
given here wins. The jars are the exception: under ``spark-submit`` its ``spark.jars`` is the
full list (the packages the server resolved, the local connector jars, the job's own), what the
executors fetch from the driver, while the one made here lacks the resolved packages; so the
jar settings are left as ``spark-submit`` has them. (Set here, they would leave a cluster's
executors with the local jars only, failing to read a connector's partitions.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pyspark.sql import SparkSession

from streamjobs.domain.connections import Connection
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.spark_conf import (
    OPTIONS_REDACTION_SETTING,
    REDACTION_REGEX,
    local_cores,
    session_conf,
)

MAVEN_REPOSITORY = Path.home() / ".m2" / "repository"
JAR_SETTINGS = ("spark.jars", "spark.jars.packages")
GATEWAY_PORT_VARIABLE = "PYSPARK_GATEWAY_PORT"
"""Set when Python runs under ``spark-submit``, whose JVM (and settings) the session joins."""


def mask_secret_options(spark: SparkSession) -> None:
    """Make Spark mask secret-looking reader and writer options in the plans it prints."""
    spark.conf.set(OPTIONS_REDACTION_SETTING, REDACTION_REGEX)


def build_session(
    job: StreamingJob, *, connections: Iterable[Connection], master: str | None = None
) -> SparkSession:
    """The session to run ``job`` in (the running one, when there is one)."""
    builder = SparkSession.builder
    if master:
        builder = builder.master(master)
    conf = session_conf(
        job,
        connections=connections,
        maven_repository=MAVEN_REPOSITORY,
        cores=local_cores(master),
    )
    under_spark_submit = GATEWAY_PORT_VARIABLE in os.environ
    for key, value in conf.items():
        if not (under_spark_submit and key in JAR_SETTINGS):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if job.spec.pipeline is not None:
        spark.sparkContext.setLogLevel(str(job.spec.pipeline.log_level))
    return spark
