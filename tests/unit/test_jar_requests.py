"""What a job asks the server to resolve before its driver starts (``domain.jar_requests``)."""

from __future__ import annotations

from typing import Any

from streamjobs.domain.connectors import (
    KAFKA_TOKEN_PROVIDER,
    connectors_named,
    local_jars_for,
    spark_conf_for,
)
from streamjobs.domain.jar_requests import JarRequest, jar_request
from streamjobs.domain.spec import parse_manifest
from tests.factories import pipeline_manifest, python_manifest

KAFKA = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.3"
DELTA = "io.delta:delta-spark_4.1_2.13:4.4.0"
TOKEN_PROVIDER_JAR = f"{KAFKA_TOKEN_PROVIDER}:4.0.0"


def python_job(*packages: str, **spark_conf: str) -> dict[str, Any]:
    manifest = python_manifest()
    manifest["spec"]["dependencies"] = {"packages": list(packages)}
    if spark_conf:
        manifest["spec"]["configuration"] = {"sparkConf": spark_conf}
    return manifest


def test_a_pipeline_asks_for_the_connectors_of_its_formats_with_their_fixes() -> None:
    manifest = pipeline_manifest(name="orders")
    manifest["spec"]["pipeline"]["inputs"][0] = {
        "name": "ticks",
        "format": "kafka",
        "dataset": "kafka-main:orders",
    }
    manifest["spec"]["pipeline"]["outputs"][0].update(format="delta")

    request = jar_request(parse_manifest(manifest))

    assert request.packages == (KAFKA, DELTA)
    assert request.resolver_settings == (("spark.jars.excludes", KAFKA_TOKEN_PROVIDER),)
    assert request.local_jars == (TOKEN_PROVIDER_JAR,)
    assert request.describe() == "3 connector jars"


def test_a_pipeline_of_built_in_formats_asks_for_nothing() -> None:
    request = jar_request(parse_manifest(pipeline_manifest()))

    assert request == JarRequest()
    assert request.empty


def test_a_python_job_naming_the_kafka_connector_gets_its_resolution_fixes() -> None:
    request = jar_request(parse_manifest(python_job(KAFKA)))

    assert request.packages == (KAFKA,)
    assert request.resolver_settings == (("spark.jars.excludes", KAFKA_TOKEN_PROVIDER),)
    assert request.local_jars == (TOKEN_PROVIDER_JAR,)


def test_a_python_job_naming_a_connector_does_not_get_its_session_settings() -> None:
    assert spark_conf_for([], [DELTA]) == {}
    assert spark_conf_for(["delta"], [DELTA])["spark.sql.extensions"]


def test_a_connector_is_named_at_any_version_but_not_by_another_artifact() -> None:
    older = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0"
    assert len(connectors_named([older])) == 1
    assert connectors_named(["org.apache.spark:spark-avro_2.13:4.1.3"]) == []
    assert local_jars_for([], ["com.example:udfs:1.0"]) == []


def test_a_python_job_with_a_plain_package_asks_for_it_alone() -> None:
    request = jar_request(parse_manifest(python_job("com.example:udfs:1.0")))

    assert request == JarRequest(packages=("com.example:udfs:1.0",))
    assert request.describe() == "1 connector jar"


def test_the_resolver_settings_of_the_jobs_spark_conf_shape_the_request() -> None:
    repositories = "https://repo.example.com/maven"
    manifest = python_job("com.example:udfs:1.0", **{"spark.jars.repositories": repositories})

    request = jar_request(parse_manifest(manifest))

    assert request.resolver_settings == (("spark.jars.repositories", repositories),)


def test_two_jobs_needing_the_same_jars_make_equal_requests() -> None:
    first = jar_request(parse_manifest(python_job(KAFKA)))
    second = jar_request(parse_manifest(python_job(KAFKA)))

    assert first == second
    assert hash(first) == hash(second)
