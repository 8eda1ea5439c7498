"""Spark settings from secrets (``sparkConfSecrets``): in a private properties file that
spark-submit reads, never on the command line, and never a setting Spark copies onto one."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.launch.attempt_directory import (
    REPORT_TOKEN_FILE,
    SECRET_CONF_FILE,
    attempt_files,
    private_files,
    secret_properties,
)
from streamjobs.launch.base import LaunchFailed
from streamjobs.launch.command import Toolchain, spark_submit_command
from tests.factories import python_manifest
from tests.launch.conftest import attempt_for

TOOLCHAIN = Toolchain(
    spark_submit=Path("/opt/pyspark/bin/spark-submit"),
    python="/venv/bin/python",
    runner_entry=Path("/src/streamjobs/runner/__main__.py"),
    maven_repository=Path("/home/me/.m2/repository"),
)
DIRECTORY = Path("/home/me/.streamjobs/apps/app-0001/1")
VALUE = "k3y-store-pa55"


def argv_of(**fields: object) -> tuple[str, ...]:
    attempt = attempt_for(python_manifest("py"), DIRECTORY, **fields)
    command = spark_submit_command(
        attempt, master="local[1]", ui_port=4555, toolchain=TOOLCHAIN, base_environment={}
    )
    assert not any(VALUE in value for value in command.environment.values())
    return command.argv


def test_secret_settings_go_to_a_properties_file_named_on_the_command_line() -> None:
    argv = argv_of(spark_conf_secrets={"spark.ssl.keyStorePassword": VALUE})
    assert not any(VALUE in arg for arg in argv)
    redaction = next(arg for arg in argv if arg.startswith("spark.redaction.regex="))
    assert redaction.endswith("|spark\\.ssl\\.keyStorePassword")
    at = argv.index("--properties-file")
    assert argv[at + 1] == str(DIRECTORY / SECRET_CONF_FILE)
    assert "--load-spark-defaults" in argv
    assert argv.index("--load-spark-defaults") < argv.index("/app/job.py")


def test_without_secret_settings_there_is_no_properties_file() -> None:
    argv = argv_of()
    assert "--properties-file" not in argv
    attempt = attempt_for(python_manifest("py"), DIRECTORY)
    assert private_files(attempt) == {}


def test_the_private_files_hold_the_token_and_the_secret_settings() -> None:
    attempt = attempt_for(
        python_manifest("py"),
        DIRECTORY,
        spark_conf_secrets={"spark.ssl.keyStorePassword": VALUE},
        report_url="http://127.0.0.1:1/reports",
        report_token="t0ken",
    )
    files = private_files(attempt)
    assert files[REPORT_TOKEN_FILE] == "t0ken"
    assert f"spark.ssl.keyStorePassword={VALUE}\n" in files[SECRET_CONF_FILE]
    assert not any(VALUE in content for content in attempt_files(attempt).values())


def test_properties_are_escaped_to_read_back_as_given() -> None:
    text = secret_properties({"spark.a b": "x=y:z #!\\ é\n\t😀"})
    assert text.splitlines()[1] == (
        "spark.a\\ b=x\\=y\\:z\\ \\#\\!\\\\\\ \\u00e9\\u000a\\u0009\\ud83d\\ude00"
    )


@pytest.mark.parametrize(
    "key",
    [
        "spark.driver.extraJavaOptions",
        "spark.driver.defaultJavaOptions",
        "spark.executor.extraJavaOptions",
        "spark.driver.extraClassPath",
        "spark.executor.extraLibraryPath",
        "spark.driver.memory",
    ],
)
def test_settings_spark_puts_on_a_command_line_cannot_take_a_secret(key: str) -> None:
    with pytest.raises(LaunchFailed, match=rf'sparkConfSecrets\["{key}"\]: Spark puts'):
        argv_of(spark_conf_secrets={key: VALUE})
