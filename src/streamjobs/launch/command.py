"""The ``spark-submit`` command line and environment of one attempt, computed without running it.

Everything here is a pure function of the ``AttemptSpec`` and a few facts about this machine
(``Toolchain``), so the exact command a driver starts with can be checked in fast tests. The
launchers write the files it refers to (``attempt_directory``) and start it.

Secret values never appear in the command line, which every user of the machine can read in
the process list: ``envSecrets`` and connections' secrets go into the driver's environment, and
``sparkConfSecrets`` into a properties file of mode 600 that spark-submit reads
(``--properties-file``) and turns into the driver JVM's Spark settings.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.locations import LocationError
from streamjobs.domain.locations import local_path as domain_local_path
from streamjobs.domain.manifest import ApplicationType, Deployment, StreamingJob
from streamjobs.domain.snapshots import SNAPSHOT_REQUEST_FILE, SNAPSHOTS_DIRECTORY
from streamjobs.domain.spark_conf import REDACTION_REGEX, session_conf
from streamjobs.launch.attempt_directory import (
    CONNECTIONS_FILE,
    MANIFEST_FILE,
    PROMOTE_FILE,
    REPORT_TOKEN_FILE,
    SECRET_CONF_FILE,
    STOP_FILE,
    standby_ready_path,
)
from streamjobs.launch.base import AttemptSpec, LaunchFailed, NodeSize
from streamjobs.launch.driver_addresses import LOOPBACK_DRIVER, DriverAddresses
from streamjobs.launch.executor_settings import DYNAMIC_ALLOCATION_DEFAULTS, executor_settings

PACKAGES_SETTING = "spark.jars.packages"
JARS_SETTING = "spark.jars"
REDACTION_SETTING = "spark.redaction.regex"
"""What Spark masks in its UI and logs; the keys of ``sparkConfSecrets`` are added to it."""

COMMAND_LINE_SETTINGS = re.compile(
    r"spark\.(driver|executor)\.(extra|default)(JavaOptions|ClassPath|LibraryPath)"
    r"|spark\.driver\.memory"
)
"""Settings spark-submit (or a standalone worker) copies onto a JVM's command line, so a secret
there would show in the process list."""

UMASK_SETTING = "spark.hadoop.fs.permissions.umask-mode"
SHARED_UMASK = "002"
"""A driver's files are group-writable: its bundle's other accounts share its group."""

SPARK_INTERNAL = "spark-internal"
"""A jvm job's main application file when its class is on Spark's own classpath."""
LOOPBACK = LOOPBACK_DRIVER.host
DEFAULT_JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
"""Spark's JVM options for administrators, put before the job's own (spec.configuration
.javaOptions): the server's ``driver_java_options``, which no job may set."""


@dataclass(frozen=True)
class Toolchain:
    """Where this machine's programs are: spark-submit, the Python drivers run with, the
    runner's entry point, the local Maven repository; and the JVM options the operator gives
    every driver started on this machine (``driver_java_options``)."""

    spark_submit: Path
    python: str
    runner_entry: Path
    maven_repository: Path
    driver_java_options: str = ""

    @classmethod
    def installed(
        cls, maven_repository: Path | None = None, *, driver_java_options: str = ""
    ) -> Toolchain:
        """The spark-submit installed with pyspark, this interpreter, this install's runner;
        ``maven_repository`` by default ``~/.m2/repository``."""
        pyspark_spec = importlib.util.find_spec("pyspark")
        runner_spec = importlib.util.find_spec("streamjobs.runner.__main__")
        if pyspark_spec is None or pyspark_spec.origin is None:
            raise LaunchFailed("pyspark is not installed, so there is no spark-submit to run")
        if runner_spec is None or runner_spec.origin is None:
            raise LaunchFailed("the streamjobs runner (streamjobs.runner) is not installed")
        return cls(
            spark_submit=Path(pyspark_spec.origin).parent / "bin" / "spark-submit",
            python=sys.executable,
            runner_entry=Path(runner_spec.origin),
            maven_repository=maven_repository or Path.home() / ".m2" / "repository",
            driver_java_options=driver_java_options,
        )

    @property
    def spark_home(self) -> Path:
        return self.spark_submit.parent.parent


@dataclass(frozen=True)
class DriverCommand:
    """What to run (``argv``) with which environment: the whole environment, not a delta."""

    argv: tuple[str, ...]
    environment: dict[str, str]


def local_master(driver: NodeSize) -> str:
    """The master of a singleNode job: the driver runs its tasks itself, on its own cores."""
    return f"local[{driver.cores}]"


def master_for(job: StreamingJob, driver: NodeSize, cluster_master: str | None) -> str:
    """``local[N]`` for singleNode jobs, the cluster's ``spark://host:port`` for standard ones."""
    if job.spec.instance.deployment is Deployment.SINGLE_NODE:
        return local_master(driver)
    if cluster_master is None:
        raise LaunchFailed(
            f"job {job.name!r} has spec.instance.deployment: standard, which needs a Spark "
            "cluster, but this server runs drivers on this machine only (local[N]); use "
            "singleNode or configure a standalone master"
        )
    return cluster_master


def spark_submit_command(
    attempt: AttemptSpec,
    *,
    master: str,
    ui_port: int,
    toolchain: Toolchain,
    base_environment: Mapping[str, str],
    driver_addresses: DriverAddresses = LOOPBACK_DRIVER,
) -> DriverCommand:
    """The spark-submit command line and environment that start ``attempt``'s driver; a
    client-mode driver of a cluster listens and is reached at ``driver_addresses``, a local one
    at 127.0.0.1."""
    job = attempt.job
    configuration = job.spec.configuration
    dependencies = job.spec.dependencies
    argv = [str(toolchain.spark_submit), "--master", master]
    if not master.startswith("local"):
        argv += ["--deploy-mode", "client"]
    argv += ["--driver-memory", f"{attempt.driver.memory_mb}m"]
    if configuration.java_options:
        argv += ["--driver-java-options", configuration.java_options]
    if dependencies.files:
        argv += ["--files", ",".join(dependencies.files)]
    py_files = list(dependencies.py_files)
    if attempt.packaged_jars and job.spec.application.type is ApplicationType.PYTHON:
        py_files += attempt.packaged_jars  # as spark-submit --packages does for Python programs
    if py_files:
        argv += ["--py-files", ",".join(py_files)]
    addresses = addresses_of_driver(master, driver_addresses)
    settings = spark_settings(
        attempt, master=master, ui_port=ui_port, toolchain=toolchain, driver_addresses=addresses
    )
    for key, value in settings:
        argv += ["--conf", f"{key}={value}"]
    if attempt.spark_conf_secrets:
        check_secret_settings(attempt)
        argv += ["--properties-file", str(attempt.directory / SECRET_CONF_FILE)]
        argv += ["--load-spark-defaults"]
    argv += application_arguments(attempt, toolchain=toolchain)
    return DriverCommand(
        argv=tuple(argv),
        environment=driver_environment(
            attempt, toolchain, base_environment, bind_address=addresses.bind_address
        ),
    )


def addresses_of_driver(master: str, cluster_driver: DriverAddresses) -> DriverAddresses:
    """A driver's addresses: 127.0.0.1 for ``local[N]`` (nothing else connects to it), else
    those of the cluster's client-mode drivers."""
    return LOOPBACK_DRIVER if master.startswith("local") else cluster_driver


def spark_settings(
    attempt: AttemptSpec,
    *,
    master: str,
    ui_port: int,
    toolchain: Toolchain,
    driver_addresses: DriverAddresses = LOOPBACK_DRIVER,
) -> list[tuple[str, str]]:
    """Every ``--conf`` of the driver, in order.

    The job's own settings (``sparkConf``, inside ``session_conf``) come after the defaults
    they may change, and before the ones the server owns: node sizes (which quotas count),
    the UI port the handle records and the driver's addresses stay as the server sets them:
    127.0.0.1 for a ``local[N]`` master, else ``driver_addresses``; a cluster-mode driver gets
    none, the worker it runs on decides. So do the administrator's JVM options: the toolchain's
    ``driver_java_options`` for a driver on this host, none for a cluster-mode one.
    """
    job = attempt.job
    instance = job.spec.instance
    single_node = instance.deployment is Deployment.SINGLE_NODE
    settings: dict[str, str] = {}
    if job.spec.configuration.java_options:
        settings["spark.executor.extraJavaOptions"] = job.spec.configuration.java_options
    if instance.dynamic:
        settings.update(DYNAMIC_ALLOCATION_DEFAULTS)
    settings.update(
        session_conf(
            job,
            connections=attempt.connections,
            maven_repository=toolchain.maven_repository,
            cores=attempt.driver.cores if single_node else None,
        )
    )
    if attempt.packaged_jars is not None:
        settings = with_packaged_jars(settings, attempt.packaged_jars)
    if attempt.spark_conf_secrets:
        keys = "|".join(re.escape(key) for key in attempt.spark_conf_secrets)
        settings[REDACTION_SETTING] = f"{settings.get(REDACTION_SETTING, REDACTION_REGEX)}|{keys}"
    settings.update(
        {
            "spark.driver.cores": str(attempt.driver.cores),
            "spark.ui.enabled": "true",
            "spark.ui.port": str(ui_port),
            "spark.ui.killEnabled": "false",
            UMASK_SETTING: SHARED_UMASK,
        }
    )
    settings.pop(DEFAULT_JAVA_OPTIONS, None)
    local = master.startswith("local")
    if local or not instance.in_cluster_mode:
        addresses = LOOPBACK_DRIVER if local else driver_addresses
        settings["spark.driver.host"] = addresses.host
        settings["spark.driver.bindAddress"] = addresses.bind_address
        if toolchain.driver_java_options:
            settings[DEFAULT_JAVA_OPTIONS] = toolchain.driver_java_options
    if not single_node:
        settings.update(executor_settings(attempt))
    return list(settings.items())


def with_packaged_jars(settings: Mapping[str, str], jars: Sequence[str]) -> dict[str, str]:
    """``settings`` with the server-resolved ``jars`` in ``spark.jars`` in place of
    ``spark.jars.packages``, so the driver's spark-submit resolves nothing."""
    changed = {key: value for key, value in settings.items() if key != PACKAGES_SETTING}
    listed = [jar for jar in settings.get(JARS_SETTING, "").split(",") if jar]
    every = list(dict.fromkeys([*jars, *listed]))
    if every:
        changed[JARS_SETTING] = ",".join(every)
    return changed


def check_secret_settings(attempt: AttemptSpec) -> None:
    """``LaunchFailed`` for a ``sparkConfSecrets`` setting that would end up on a command line."""
    for key in attempt.spark_conf_secrets:
        if COMMAND_LINE_SETTINGS.fullmatch(key):
            raise LaunchFailed(
                f'spec.configuration.sparkConfSecrets["{key}"]: Spark puts this setting on the '
                "JVM's command line, which every user of the machine can read; it cannot take "
                "a secret"
            )


def application_arguments(attempt: AttemptSpec, *, toolchain: Toolchain) -> list[str]:
    """The end of the command line: what spark-submit runs, and its arguments."""
    application = attempt.job.spec.application
    if application.type is ApplicationType.PIPELINE:
        return [str(toolchain.runner_entry), *runner_arguments(attempt)]
    main_file = main_application_path(attempt.job)
    if application.type is ApplicationType.PYTHON:
        return [main_file, *application.arguments]
    if not application.main_class:
        raise LaunchFailed(f"jvm job {attempt.job.name!r} has no spec.application.mainClass")
    return ["--class", application.main_class, main_file, *application.arguments]


def runner_arguments(attempt: AttemptSpec) -> list[str]:
    """The runner's command line: where its files are, where the server asks it to stop or to
    take a snapshot, where it stages the snapshots it takes, where it reports, and for a
    standby where it is promoted and says it is ready."""
    directory = attempt.directory
    arguments = ["--manifest", str(directory / MANIFEST_FILE)]
    if attempt.connections:
        arguments += ["--connections", str(directory / CONNECTIONS_FILE)]
    arguments += [
        "--application-id",
        attempt.application_id,
        "--stop-file",
        str(directory / STOP_FILE),
        "--snapshot-request-file",
        str(directory / SNAPSHOT_REQUEST_FILE),
        "--snapshot-directory",
        str(directory / SNAPSHOTS_DIRECTORY),
    ]
    if attempt.hold_until is not None:
        arguments += ["--hold-until", attempt.hold_until.isoformat()]
    if attempt.standby:
        arguments += [
            "--standby-promote-file",
            str(directory / PROMOTE_FILE),
            "--standby-ready-file",
            str(standby_ready_path(directory)),
        ]
    if attempt.report_url:
        arguments += [
            "--report-url",
            attempt.report_url,
            "--report-token-file",
            str(directory / REPORT_TOKEN_FILE),
        ]
    return arguments


def main_application_path(job: StreamingJob) -> str:
    """The job's main application file as a local path (``local://`` and ``file://`` dropped);
    ``spark-internal`` as it is."""
    main_file = job.spec.application.main_application_file
    if not main_file:
        raise LaunchFailed(
            f"{job.spec.application.type} job {job.name!r} has no "
            "spec.application.mainApplicationFile"
        )
    return local_path(main_file)


def local_path(location: str) -> str:
    """``local:///a/b``, ``file:/a/b``, ``file://localhost/a/b`` -> ``/a/b``, read as validation
    reads them (``domain.locations``); anything else unchanged."""
    try:
        path = domain_local_path(location)
    except LocationError:
        return location
    return location if path is None else path


def paths_to_check(job: StreamingJob) -> list[str]:
    """Files on this machine the driver needs before it starts: its main application file and
    dependencies given as plain paths or ``file://`` (``local://`` ones live on the nodes)."""
    paths = []
    application = job.spec.application
    main_file = application.main_application_file
    if application.type is not ApplicationType.PIPELINE and main_file != SPARK_INTERNAL:
        paths.append(main_application_path(job))
    dependencies = job.spec.dependencies
    for location in (*dependencies.jars, *dependencies.files, *dependencies.py_files):
        if location.startswith("file://") or "://" not in location:
            paths.append(local_path(location))
    return paths


INHERITED_VARIABLES = frozenset(
    {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "TZ", "JAVA_HOME"}
)
"""The only server variables a driver inherits; never its settings, keys or database URL."""


def driver_environment(
    attempt: AttemptSpec,
    toolchain: Toolchain,
    base_environment: Mapping[str, str],
    *,
    bind_address: str = LOOPBACK,
) -> dict[str, str]:
    """The driver's environment, built from an allow-list: ``INHERITED_VARIABLES`` of
    ``base_environment``, the job's ``env``, the attempt's secrets, and last what the server
    decides: the Spark that runs (pyspark's), the Python its Python processes run with (this one,
    where the runner is installed) and the address its UI listens on, ``bind_address``: Spark's
    UI binds to ``SPARK_LOCAL_IP``, else to every address (loopback for local drivers, the
    driver's bind address for a cluster's client-mode ones, whose UI the server may read from
    another host)."""
    environment = {
        key: value for key, value in base_environment.items() if key in INHERITED_VARIABLES
    }
    environment.update(attempt.job.spec.configuration.env)
    environment.update(attempt.secrets)
    environment.update(
        {
            "SPARK_HOME": str(toolchain.spark_home),
            "SPARK_LOCAL_IP": bind_address,
            "PYSPARK_PYTHON": toolchain.python,
            "PYSPARK_DRIVER_PYTHON": toolchain.python,
        }
    )
    return environment


def wrapped(
    command: DriverCommand, *, python: str, exit_code_file: Path, fence: str = ""
) -> tuple[str, ...]:
    """``command`` under the wrapper that records its exit code (and ``fence``) in
    ``exit_code_file``. Run outside the sandbox, it is isolated (``-I``): no ``PYTHON*``
    variable, user site or working directory decides what it imports."""
    fenced = ("--fence", fence) if fence else ()
    return (
        python,
        "-I",
        "-m",
        "streamjobs.launch.wrapper",
        "--exit-code-file",
        str(exit_code_file),
        *fenced,
        "--",
        *command.argv,
    )
