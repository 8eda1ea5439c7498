"""Environment variables and Spark settings a manifest may not set: each refusal is at the key
that sets it and says why (and, for what a driver takes, which instance field to set instead);
the bundle's policy decides the restricted settings."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.manifest import Configuration
from streamjobs.domain.spark_policy import bundle_spark_conf_errors
from streamjobs.domain.spec import parse_manifest
from tests.factories import changed, pipeline_manifest, python_manifest


def refusals(configuration: dict[str, Any]) -> list[FieldError]:
    """The errors of a python job with ``configuration`` (none: an empty list)."""
    manifest = changed(python_manifest(), ("spec.configuration", configuration))
    try:
        parse_manifest(manifest)
    except InvalidInput as invalid:
        return list(invalid.errors)
    return []


def only_refusal(configuration: dict[str, Any]) -> FieldError:
    (error,) = refusals(configuration)
    return error


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("LD_PRELOAD", "dynamic loader"),
        ("LD_LIBRARY_PATH", "dynamic loader"),
        ("BASH_ENV", "script every shell runs first"),
        ("ENV", "script every shell runs first"),
        ("PYTHONSTARTUP", "pyFiles"),
        ("PYTHONPATH", "pyFiles"),
        ("JAVA_TOOL_OPTIONS", "javaOptions"),
        ("_JAVA_OPTIONS", "javaOptions"),
        ("CLASSPATH", "spec.dependencies.jars"),
        ("SPARK_HOME", "spark-submit"),
        ("PYSPARK_PYTHON", "which Python runs"),
        ("HADOOP_USER_NAME", "Hadoop"),
        ("PATH", "which programs"),
        ("HOME", "user site-packages"),
        ("STREAMJOBS_SECRET_KAFKA", "the server's own prefix"),
        ("ld_preload", "dynamic loader"),
    ],
)
def test_a_variable_that_changes_how_programs_load_code_is_refused_at_its_key(
    name: str, why: str
) -> None:
    error = only_refusal({"env": {name: "x"}})
    assert error.path == f'spec.configuration.env["{name}"]'
    assert error.message.startswith(f"a job may not set {name}: it ")
    assert why in error.message


def test_an_env_secret_is_refused_under_the_same_rule() -> None:
    error = only_refusal({"envSecrets": {"BASH_ENV": "a-secret"}})
    assert error.path == 'spec.configuration.envSecrets["BASH_ENV"]'


def test_ordinary_variables_pass() -> None:
    env = {"TZ": "UTC", "LOG_FORMAT": "json", "PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1"}
    assert refusals({"env": env, "envSecrets": {"API_KEY": "api-key"}}) == []


@pytest.mark.parametrize(
    ("key", "instead"),
    [
        ("spark.master", "set spec.instance.deployment instead"),
        ("spark.submit.deployMode", "set spec.instance.deployment instead"),
        ("spark.driver.memory", "set spec.instance.driver instead"),
        ("spark.driver.cores", "set spec.instance.driver instead"),
        ("spark.driver.memoryOverheadFactor", "set spec.instance.driver instead"),
        ("spark.driver.resource.gpu.amount", "set spec.instance.driver instead"),
        ("spark.memory.offHeap.size", "set spec.instance.driver instead"),
        ("spark.executor.memory", "set spec.instance.executor instead"),
        ("spark.executor.pyspark.memory", "set spec.instance.executor instead"),
        ("spark.executor.instances", "set spec.instance.executors instead"),
        ("spark.cores.max", "set spec.instance.executors instead"),
        ("spark.dynamicAllocation.maxExecutors", "set spec.instance.dynamic instead"),
    ],
)
def test_a_setting_that_decides_what_the_driver_takes_names_the_instance_field(
    key: str, instead: str
) -> None:
    error = only_refusal({"sparkConf": {key: "8"}})
    assert error.path == f'spec.configuration.sparkConf["{key}"]'
    assert error.message.startswith(f"{key} decides what the job takes, which the bundle's quota")
    assert instead in error.message


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("spark.ui.port", "the server's to set"),
        ("spark.ui.enabled", "the server's to set"),
        ("spark.driver.host", "loopback"),
        ("spark.driver.bindAddress", "loopback"),
        ("spark.local.dir", "sandbox"),
        ("spark.jars.ivy", "resolver"),
        ("spark.driver.extraClassPath", "spec.dependencies.jars"),
        ("spark.executor.extraLibraryPath", "native libraries"),
        ("spark.redaction.regex", "masks secret values"),
        ("spark.pyspark.python", "the server's Python"),
        ("spark.kubernetes.container.image", "launcher"),
        ("spark.jars", "comes from spec.dependencies.jars"),
        ("spark.jars.packages", "comes from spec.dependencies.packages"),
        ("spark.submit.pyFiles", "comes from spec.dependencies.pyFiles"),
        ("spark.driver.extraJavaOptions", "comes from spec.configuration.javaOptions"),
        (
            "spark.sql.streaming.checkpointLocation",
            "comes from spec.pipeline.streaming.checkpointLocation",
        ),
        ("spark.executorEnv.LD_PRELOAD", "sets the environment variable LD_PRELOAD"),
        ("spark.Master", "spec.instance.deployment"),
    ],
)
def test_a_setting_the_server_owns_is_refused_with_why(key: str, why: str) -> None:
    error = only_refusal({"sparkConf": {key: "x"}})
    assert error.path == f'spec.configuration.sparkConf["{key}"]'
    assert why in error.message


def test_spark_conf_secrets_and_java_options_are_held_to_the_same_rules() -> None:
    errors = refusals(
        {
            "sparkConfSecrets": {"spark.driver.memory": "big"},
            "javaOptions": "-XX:+UseG1GC -Dspark.master=local[8] -Duser.timezone=UTC",
        }
    )
    assert [error.path for error in errors] == [
        'spec.configuration.sparkConfSecrets["spark.driver.memory"]',
        "spec.configuration.javaOptions",
    ]
    assert errors[1].message.startswith("-Dspark.master decides what the job takes")


def test_ordinary_settings_pass() -> None:
    conf = {
        "spark.sql.shuffle.partitions": "8",
        "spark.streaming.stopGracefullyOnShutdown": "true",
        "spark.executorEnv.TZ": "UTC",
        "spark.hadoop.fs.s3a.endpoint": "http://minio:9000",
    }
    assert refusals({"sparkConf": conf, "javaOptions": "-XX:+UseG1GC"}) == []


def test_the_examples_settings_pass_the_pipeline_rules_too() -> None:
    manifest = changed(
        pipeline_manifest(),
        ("spec.configuration", {"sparkConf": {"spark.sql.shuffle.partitions": 8}}),
    )
    assert parse_manifest(manifest).spec.configuration.spark_conf == {
        "spark.sql.shuffle.partitions": "8"
    }


def policy_errors(
    spark_conf: dict[str, str],
    *,
    allowed: tuple[str, ...] = (),
    refused: tuple[str, ...] = (),
    java_options: str | None = None,
) -> list[FieldError]:
    configuration = Configuration(spark_conf=spark_conf, java_options=java_options)
    return bundle_spark_conf_errors(configuration, bundle="pay", allowed=allowed, refused=refused)


@pytest.mark.parametrize(
    "key",
    [
        "spark.jars.repositories",
        "spark.jars.ivySettings",
        "spark.eventLog.dir",
        "spark.history.fs.logDirectory",
        "spark.sql.warehouse.dir",
        "spark.sql.catalog.mine.warehouse",
        "spark.kerberos.keytab",
    ],
)
def test_a_restricted_setting_needs_the_bundle_to_allow_it(key: str) -> None:
    (error,) = policy_errors({key: "x"})
    assert error.path == f'spec.configuration.sparkConf["{key}"]'
    assert error.message.startswith(f"{key} is restricted (")
    assert "resource bundle 'pay' does not allow it" in error.message
    assert policy_errors({key: "x"}, allowed=(key,)) == []


def test_a_prefix_pattern_allows_every_setting_under_it() -> None:
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": "file:///logs"}
    assert len(policy_errors(conf)) == 2
    assert policy_errors(conf, allowed=("spark.eventLog.*",)) == []
    assert len(policy_errors(conf, allowed=("spark.eventLog.dir",))) == 1


def test_a_bundle_may_refuse_settings_everyone_else_may_set() -> None:
    (error,) = policy_errors({"spark.sql.shuffle.partitions": "400"}, refused=("spark.sql.*",))
    assert error.message == (
        "spark.sql.shuffle.partitions is refused by resource bundle 'pay' (spark.sql.*)"
    )
    assert policy_errors({"spark.sql.shuffle.partitions": "400"}) == []


def test_a_refusal_wins_over_an_allowance() -> None:
    errors = policy_errors(
        {"spark.eventLog.dir": "x"}, allowed=("spark.eventLog.*",), refused=("spark.eventLog.dir",)
    )
    assert [error.message for error in errors] == [
        "spark.eventLog.dir is refused by resource bundle 'pay' (spark.eventLog.dir)"
    ]


def test_java_options_go_through_the_bundle_policy() -> None:
    (error,) = policy_errors({}, java_options="-Dspark.eventLog.dir=/logs")
    assert error.path == "spec.configuration.javaOptions"
    assert error.message.startswith("-Dspark.eventLog.dir is restricted")


def test_settings_refused_everywhere_are_left_to_the_manifest_rules() -> None:
    assert policy_errors({"spark.master": "local[8]"}, refused=("spark.*",)) == []


def test_the_legacy_path_option_behaviour_is_refused() -> None:
    error = only_refusal({"sparkConf": {"spark.sql.legacy.pathOptionBehavior.enabled": "true"}})
    assert (
        error.path == 'spec.configuration.sparkConf["spark.sql.legacy.pathOptionBehavior.enabled"]'
    )
    assert "data roots" in error.message


def test_a_step_that_runs_a_program_of_the_machine_is_refused() -> None:
    manifest = changed(
        pipeline_manifest(),
        (
            "spec.pipeline.steps[0].sequence[0].sql",
            "SELECT TRANSFORM(value) USING 'sh -c id' AS (value) FROM ticks",
        ),
    )
    with pytest.raises(InvalidInput) as refused:
        parse_manifest(manifest)
    (error,) = refused.value.errors
    assert error.path == "spec.pipeline.steps[0].sequence[0].sql"
    assert "runs a program of the machine" in error.message
