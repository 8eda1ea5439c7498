"""The REST submission of a cluster-mode driver, computed without sending it.

A cluster-mode driver is started by the standalone master on one of its workers, through its
REST submission server (``rest_submission``), from a ``CreateSubmissionRequest``: the main class
Spark's ``DriverWrapper`` runs, its arguments, the Spark settings and the environment. Python
programs and a pipeline's runner run as Spark's own ``PythonRunner`` (which ``spark-submit``
uses for them too) with ``[python file, py-files, arguments…]`` and the toolchain's Python
(``spark.pyspark.python``); jvm programs with their ``mainClass`` and jar.

The Spark settings are the client mode's (``command.spark_settings``) but for those that only
fit a driver on the server's host: no driver address (the worker's is the driver's) and no UI
port (Spark picks one on the worker, which its log then says). What the driver reads (the
job's manifest, connections, report token, stop and snapshot request files, staged snapshots)
stays in the attempt directory, so that directory (``STREAMJOBS_HOME/apps``), like the
checkpoints, must be on a file system the workers share at the same path, and the toolchain
(this Python with pyspark and streamjobs installed) must be at the same path on every worker.

Secrets: ``envSecrets`` (and connections' secrets) go in ``environmentVariables``. They travel
to the master in the request and the worker starts the driver with them in its environment:
from there on their isolation is the worker's (its account, who else runs on it). Spark
settings from secrets (``sparkConfSecrets``) are refused: the worker starts the driver with every
Spark setting on its JVM's command line (``-D…``) and writes that line at the top of the
driver's log, which the worker's web UI serves to anyone who reaches it.
"""

from __future__ import annotations

from pathlib import Path

from streamjobs.domain.manifest import ApplicationType
from streamjobs.launch.base import AttemptSpec, LaunchFailed
from streamjobs.launch.command import (
    SPARK_INTERNAL,
    Toolchain,
    main_application_path,
    runner_arguments,
    spark_settings,
)
from streamjobs.launch.rest_submission import SubmissionRequest

PYTHON_RUNNER = "org.apache.spark.deploy.PythonRunner"
"""Spark's main class of Python drivers: it runs ``python <file> <args>`` beside the JVM."""
DRIVER_ONLY_SETTINGS = ("spark.ui.port", "spark.driver.host", "spark.driver.bindAddress")
"""Settings that fit only a driver on the server's host; on a worker, Spark decides."""


def submission_request(
    attempt: AttemptSpec, *, master: str, toolchain: Toolchain, spark_version: str
) -> SubmissionRequest:
    """The ``CreateSubmissionRequest`` that starts ``attempt``'s driver on a worker of
    ``master``; ``LaunchFailed`` for what a cluster-mode driver cannot be given."""
    job = attempt.job
    refuse_conf_secrets(attempt)
    configuration = job.spec.configuration
    dependencies = job.spec.dependencies
    settings = dict(spark_settings(attempt, master=master, ui_port=0, toolchain=toolchain))
    for key in DRIVER_ONLY_SETTINGS:
        settings.pop(key, None)
    settings.update(
        {
            "spark.master": master,
            "spark.submit.deployMode": "cluster",
            "spark.driver.memory": f"{attempt.driver.memory_mb}m",
            "spark.driver.supervise": "false",
        }
    )
    if configuration.java_options:
        settings["spark.driver.extraJavaOptions"] = configuration.java_options
    if dependencies.files:
        settings["spark.files"] = ",".join(dependencies.files)
    application = job.spec.application
    if application.type is ApplicationType.JVM:
        return SubmissionRequest(
            app_resource=_jvm_resource(attempt, toolchain),
            main_class=_main_class(attempt),
            app_args=tuple(application.arguments),
            spark_properties=settings,
            environment_variables=cluster_environment(attempt, toolchain),
            client_spark_version=spark_version,
        )
    py_files = list(dependencies.py_files)
    if attempt.packaged_jars and application.type is ApplicationType.PYTHON:
        py_files += attempt.packaged_jars  # as spark-submit --packages does for Python programs
    if py_files:
        settings["spark.submit.pyFiles"] = ",".join(py_files)
    settings["spark.pyspark.python"] = toolchain.python
    settings["spark.pyspark.driver.python"] = toolchain.python
    if application.type is ApplicationType.PIPELINE:
        program, arguments = str(toolchain.runner_entry), runner_arguments(attempt)
    else:
        program, arguments = main_application_path(job), list(application.arguments)
    return SubmissionRequest(
        app_resource=_as_resource(program),
        main_class=PYTHON_RUNNER,
        app_args=(program, ",".join(py_files), *arguments),
        spark_properties=settings,
        environment_variables=cluster_environment(attempt, toolchain),
        client_spark_version=spark_version,
    )


def refuse_conf_secrets(attempt: AttemptSpec) -> None:
    """``LaunchFailed`` when the attempt has Spark settings from secrets (see the module)."""
    for key in attempt.spark_conf_secrets:
        raise LaunchFailed(
            f'spec.configuration.sparkConfSecrets["{key}"]: in cluster mode the worker starts '
            "the driver with every Spark setting on its command line and at the top of its log, "
            "where others can read it; pass the secret in spec.configuration.envSecrets, or run "
            "the driver in client mode (spec.instance.deployMode: client)"
        )


def cluster_environment(attempt: AttemptSpec, toolchain: Toolchain) -> dict[str, str]:
    """The driver's environment on the worker, over the worker's own: the job's ``env``, the
    attempt's secrets, and the Python its Python processes run with. Nothing of the server's
    environment: the worker's ``PATH``, ``JAVA_HOME`` and ``SPARK_HOME`` are the ones that fit
    it (the master drops ``SPARK_LOCAL_IP`` and ``SPARK_LOCAL_HOSTNAME`` anyway)."""
    environment: dict[str, str] = dict(attempt.job.spec.configuration.env)
    environment.update(attempt.secrets)
    if attempt.job.spec.application.type is not ApplicationType.JVM:
        environment["PYSPARK_PYTHON"] = toolchain.python
        environment["PYSPARK_DRIVER_PYTHON"] = toolchain.python
    return environment


def _main_class(attempt: AttemptSpec) -> str:
    main_class = attempt.job.spec.application.main_class
    if not main_class:
        raise LaunchFailed(f"jvm job {attempt.job.name!r} has no spec.application.mainClass")
    return main_class


def _jvm_resource(attempt: AttemptSpec, toolchain: Toolchain) -> str:
    """The jar the worker fetches into the driver's directory and puts on its classpath; for a
    class on Spark's own classpath (``spark-internal``) Spark's core jar, which every worker
    has at the toolchain's path."""
    main_file = main_application_path(attempt.job)
    if main_file != SPARK_INTERNAL:
        return _as_resource(main_file)
    cores = sorted((toolchain.spark_home / "jars").glob("spark-core_*.jar"))
    if not cores:
        raise LaunchFailed(f"no spark-core jar in {toolchain.spark_home / 'jars'}")
    return cores[0].as_uri()


def _as_resource(location: str) -> str:
    """A local path as a ``file:`` URI (what the worker's fetcher reads); URIs as they are."""
    return Path(location).as_uri() if location.startswith("/") else location
