"""Which Spark settings a job may set, and why the others are refused.

Three kinds of setting are not the job's to choose:

- what a driver takes (``spark.master``, driver and executor sizes and counts, dynamic
  allocation): the bundle's quota counts it from ``spec.instance``, so each message names the
  field of the instance section to set instead;
- what the server decides for every driver (where its UI listens, its class path, where its
  jars and scratch files go, how secrets are masked), or takes from another field of the manifest
  (``spec.dependencies``, the checkpoint location);
- settings that reach outside the bundle's data roots or decide where code comes from (event
  logs, jar repositories, catalogs, warehouses): restricted, so only a bundle whose policy allows
  them (``spark_conf_allowed``) may set them.

A bundle may also refuse more (``spark_conf_refused``). Settings given as ``-Dspark.…`` in
``javaOptions`` count as set, and ``spark.executorEnv.NAME`` follows the environment rules.
The first two kinds are manifest rules; the bundle's part needs the bundle and runs where
the server checks what a job refers to.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from streamjobs.domain.bundle_policy import spark_conf_entry_matches
from streamjobs.domain.env_rules import map_key_path, refused_env_reason
from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import Configuration

JAVA_OPTIONS_PATH = "spec.configuration.javaOptions"


class _Refusal(NamedTuple):
    entry: str
    """A setting name or a ``prefix.*`` pattern."""
    reason: str


def _taken(entries: Sequence[str], instead: str, meaning: str) -> list[_Refusal]:
    reason = (
        "decides what the job takes, which the bundle's quota counts from the instance "
        f"section; set {instead} instead ({meaning})"
    )
    return [_Refusal(entry, reason) for entry in entries]


def _owned(entries: Sequence[str], why: str) -> list[_Refusal]:
    return [_Refusal(entry, f"is the server's to set: {why}") for entry in entries]


def _elsewhere(entries: Sequence[str], field: str) -> list[_Refusal]:
    return [_Refusal(entry, f"comes from {field}; set it there") for entry in entries]


ALWAYS_REFUSED: tuple[_Refusal, ...] = (
    *_taken(
        ["spark.master", "spark.submit.deployMode"],
        "spec.instance.deployment",
        "singleNode runs local[N] on the driver node type's cores, standard runs on the "
        "server's cluster",
    ),
    *_taken(
        [
            "spark.driver.cores",
            "spark.driver.memory",
            "spark.driver.memoryOverhead",
            "spark.driver.memoryOverheadFactor",
            "spark.driver.minMemoryOverhead",
            "spark.driver.resource.*",
            "spark.memory.offHeap.*",
        ],
        "spec.instance.driver",
        "a node type: the driver's cores and memory",
    ),
    *_taken(
        [
            "spark.executor.cores",
            "spark.executor.memory",
            "spark.executor.memoryOverhead",
            "spark.executor.memoryOverheadFactor",
            "spark.executor.minMemoryOverhead",
            "spark.executor.pyspark.memory",
            "spark.executor.resource.*",
        ],
        "spec.instance.executor",
        "a node type: each executor's cores and memory",
    ),
    *_taken(
        ["spark.executor.instances", "spark.cores.max"],
        "spec.instance.executors",
        "how many executors of spec.instance.executor run",
    ),
    *_taken(
        ["spark.dynamicAllocation.*"],
        "spec.instance.dynamic",
        "dynamic allocation, between spec.instance.minExecutors and spec.instance.executors; "
        "its timeouts are the job's to set",
    ),
    *_owned(
        ["spark.driver.host", "spark.driver.bindAddress"],
        "drivers listen on the loopback address, or on the cluster's network at the address "
        "the server's settings give (STREAMJOBS_DRIVER_HOST, STREAMJOBS_DRIVER_BIND_ADDRESS)",
    ),
    *_owned(
        ["spark.ui.enabled", "spark.ui.port", "spark.ui.killEnabled"],
        "the server reads each driver's UI at the port it picks, and stops jobs itself",
    ),
    *_owned(["spark.kubernetes.*"], "its launcher decides where and how drivers run"),
    *_owned(["spark.jars.ivy"], "where Spark's resolver keeps the jars it fetches"),
    *_owned(["spark.local.dir"], "the driver's scratch space, inside its sandbox"),
    *_owned(
        ["spark.sql.legacy.pathOptionBehavior.enabled"],
        "it makes Spark read a path given among a dataset's options as well as its own, past "
        "the check of paths against the bundle's data roots",
    ),
    *_owned(
        [
            "spark.driver.extraClassPath",
            "spark.executor.extraClassPath",
            "spark.driver.extraLibraryPath",
            "spark.executor.extraLibraryPath",
        ],
        "classes and native libraries come from the job's own files (spec.dependencies.jars)",
    ),
    *_owned(
        ["spark.pyspark.python", "spark.pyspark.driver.python"],
        "drivers run with the server's Python, where pyspark and the runner are installed",
    ),
    *_owned(
        ["spark.redaction.regex", "spark.sql.redaction.options.regex"],
        "it masks secret values in logs, plans and the UI "
        "(spark.sql.redaction.string.regex may add to what is masked)",
    ),
    *_elsewhere(
        [
            "spark.driver.extraJavaOptions",
            "spark.driver.defaultJavaOptions",
            "spark.executor.extraJavaOptions",
            "spark.executor.defaultJavaOptions",
        ],
        JAVA_OPTIONS_PATH,
    ),
    *_elsewhere(["spark.jars"], "spec.dependencies.jars"),
    *_elsewhere(["spark.jars.packages"], "spec.dependencies.packages (Maven coordinates)"),
    *_elsewhere(["spark.files"], "spec.dependencies.files"),
    *_elsewhere(["spark.submit.pyFiles"], "spec.dependencies.pyFiles"),
    *_elsewhere(
        ["spark.sql.streaming.checkpointLocation"], "spec.pipeline.streaming.checkpointLocation"
    ),
)
"""Settings no job may set, each with why (and where to say what it wants instead)."""

RESTRICTED: tuple[_Refusal, ...] = (
    _Refusal("spark.jars.repositories", "it decides where Spark downloads jars from"),
    _Refusal("spark.jars.ivySettings", "it decides where Spark downloads jars from"),
    _Refusal("spark.eventLog.*", "event logs go to a directory outside the bundle's data roots"),
    _Refusal("spark.history.*", "it configures a history server over shared event logs"),
    _Refusal("spark.driver.log.*", "it copies the driver's log to a directory of its own"),
    _Refusal("spark.sql.warehouse.dir", "it writes tables outside the bundle's data roots"),
    _Refusal("spark.checkpoint.dir", "it writes checkpoints outside the bundle's data roots"),
    _Refusal(
        "spark.sql.catalog.*",
        "a catalog has its own warehouse (the server makes one catalog of each lakehouse "
        "connection a job uses)",
    ),
    _Refusal("spark.archives", "it unpacks archives that are not among spec.dependencies"),
    _Refusal("spark.kerberos.*", "it names the Kerberos identity and keytab the job acts with"),
)
"""Settings a job may set only if its bundle allows them, each with why they are restricted."""

JOB_DYNAMIC_ALLOCATION_SETTINGS = frozenset(
    {
        "spark.dynamicAllocation.executorIdleTimeout",
        "spark.dynamicAllocation.cachedExecutorIdleTimeout",
        "spark.dynamicAllocation.schedulerBacklogTimeout",
        "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout",
        "spark.dynamicAllocation.shuffleTracking.timeout",
    }
)
"""How fast dynamic allocation adds and gives back executors: the job's to tune, as it never
takes more than ``spec.instance.executors`` (the rest of ``spark.dynamicAllocation.*`` is
refused)."""

_ENV_SETTING_PREFIXES = ("spark.executorEnv.", "spark.yarn.appMasterEnv.")


def refused_setting_reason(key: str) -> str | None:
    """Why no job may set the Spark setting ``key``, or None if the bundle decides."""
    if key in JOB_DYNAMIC_ALLOCATION_SETTINGS:
        return None
    for prefix in _ENV_SETTING_PREFIXES:
        if key.startswith(prefix):
            variable = key.removeprefix(prefix)
            env_reason = refused_env_reason(variable)
            if env_reason is not None:
                return f"sets the environment variable {variable}, which {env_reason}"
    refusal = _first_match(ALWAYS_REFUSED, key)
    return None if refusal is None else refusal.reason


def spark_conf_errors(configuration: Configuration) -> Iterator[FieldError]:
    """A ``FieldError`` for each Spark setting no job may set, at its key in ``sparkConf`` or
    ``sparkConfSecrets`` (or at ``javaOptions`` for a ``-Dspark.…`` option)."""
    for path, key in settings_given(configuration):
        reason = refused_setting_reason(key)
        if reason is not None:
            yield FieldError(path, f"{_shown(path, key)} {reason}")


def bundle_spark_conf_errors(
    configuration: Configuration,
    *,
    bundle: str,
    allowed: Sequence[str],
    refused: Sequence[str],
) -> list[FieldError]:
    """A ``FieldError`` for each setting the bundle's policy refuses: one restricted by default
    that ``allowed`` does not cover, or one ``refused`` covers. ``allowed`` and ``refused`` hold
    setting names and ``prefix.*`` patterns; a refused entry wins over an allowed one."""
    errors = []
    for path, key in settings_given(configuration):
        if refused_setting_reason(key) is not None:
            continue
        refusing = next((entry for entry in refused if spark_conf_entry_matches(entry, key)), None)
        if refusing is not None:
            errors.append(
                FieldError(
                    path,
                    f"{_shown(path, key)} is refused by resource bundle {bundle!r} ({refusing})",
                )
            )
            continue
        restricted = _first_match(RESTRICTED, key)
        if restricted is not None and not any(
            spark_conf_entry_matches(entry, key) for entry in allowed
        ):
            errors.append(
                FieldError(
                    path,
                    f"{_shown(path, key)} is restricted ({restricted.reason}), and resource "
                    f"bundle {bundle!r} does not allow it; those who manage bundles may allow "
                    f"{restricted.entry} in its Spark setting policy (streamjobs set spark-conf)",
                )
            )
    return errors


def settings_given(configuration: Configuration) -> Iterator[tuple[str, str]]:
    """``(path, key)`` of every Spark setting the configuration sets: ``sparkConf``,
    ``sparkConfSecrets`` and each ``-Dspark.…`` of ``javaOptions``."""
    for field, settings in (
        ("sparkConf", configuration.spark_conf),
        ("sparkConfSecrets", configuration.spark_conf_secrets),
    ):
        for key in settings:
            yield map_key_path(f"spec.configuration.{field}", key), key
    for key in _java_option_settings(configuration.java_options):
        yield JAVA_OPTIONS_PATH, key


def _java_option_settings(java_options: str | None) -> list[str]:
    """The ``spark.…`` system properties ``-D`` options set (Spark reads them as settings)."""
    if not java_options:
        return []
    try:
        words = shlex.split(java_options)
    except ValueError:
        words = java_options.split()
    keys = (word[2:].partition("=")[0] for word in words if word.startswith("-D"))
    return [key for key in keys if key.startswith("spark.")]


def _shown(path: str, key: str) -> str:
    """The setting as the manifest gives it: ``-Dspark.x`` in ``javaOptions``."""
    return f"-D{key}" if path == JAVA_OPTIONS_PATH else key


def _first_match(refusals: Sequence[_Refusal], key: str) -> _Refusal | None:
    """The first refusal whose entry covers ``key``, ignoring case (Spark's keys are
    case-sensitive, so a key in another case would be ignored anyway; refusing it is safe)."""
    folded = key.casefold()
    for refusal in refusals:
        if spark_conf_entry_matches(refusal.entry.casefold(), folded):
            return refusal
    return None
