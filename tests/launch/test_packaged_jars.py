"""A driver given the jars the server resolved: ``spark.jars``, never ``spark.jars.packages``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from streamjobs.launch.command import with_packaged_jars
from tests.factories import pipeline_manifest, python_manifest
from tests.launch.conftest import attempt_for
from tests.launch.test_command import ATTEMPT_DIR, command_for, conf_of, option_values

KAFKA = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.3"
RESOLVED = ("/ivy/jars/kafka.jar", "/ivy/jars/kafka-clients.jar")
TOKEN_PROVIDER = (
    "/home/me/.m2/repository/org/apache/spark/spark-token-provider-kafka-0-10_2.13/4.0.0/"
    "spark-token-provider-kafka-0-10_2.13-4.0.0.jar"
)


def python_job(**dependencies: Any) -> dict[str, Any]:
    manifest = python_manifest()
    manifest["spec"]["dependencies"] = dependencies
    return manifest


def test_resolved_jars_replace_the_packages_beside_the_local_and_own_jars() -> None:
    manifest = python_job(packages=[KAFKA], jars=["file:///opt/own.jar"])
    attempt = replace(attempt_for(manifest, ATTEMPT_DIR), packaged_jars=RESOLVED)

    conf = conf_of(command_for(attempt).argv)

    assert "spark.jars.packages" not in conf
    assert conf["spark.jars"].split(",") == [*RESOLVED, TOKEN_PROVIDER, "file:///opt/own.jar"]


def test_a_python_program_finds_the_resolved_jars_on_its_path_as_with_packages() -> None:
    manifest = python_job(packages=[KAFKA], pyFiles=["file:///opt/lib.zip"])
    attempt = replace(attempt_for(manifest, ATTEMPT_DIR), packaged_jars=RESOLVED)

    [py_files] = option_values(command_for(attempt).argv, "--py-files")

    assert py_files.split(",") == ["file:///opt/lib.zip", *RESOLVED]


def test_a_pipeline_gets_the_resolved_jars_but_not_on_its_python_path() -> None:
    manifest = pipeline_manifest()
    manifest["spec"]["pipeline"]["outputs"][0].update(format="delta")
    attempt = replace(attempt_for(manifest, ATTEMPT_DIR), packaged_jars=RESOLVED)

    argv = command_for(attempt).argv

    assert conf_of(argv)["spark.jars"].split(",") == list(RESOLVED)
    assert "spark.jars.packages" not in conf_of(argv)
    assert option_values(argv, "--py-files") == []


def test_without_resolved_jars_the_driver_resolves_its_packages_itself() -> None:
    conf = conf_of(command_for(attempt_for(python_job(packages=[KAFKA]), ATTEMPT_DIR)).argv)

    assert conf["spark.jars.packages"] == KAFKA


def test_no_jars_at_all_leave_spark_jars_unset() -> None:
    assert with_packaged_jars({"spark.jars.packages": ""}, ()) == {}
    assert with_packaged_jars({"spark.jars": "/a.jar"}, ("/a.jar",)) == {"spark.jars": "/a.jar"}
