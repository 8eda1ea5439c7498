"""The connector table: which packages, settings and jars each format brings to a Spark session."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import PurePosixPath

import pytest

from streamjobs.domain.connectors import (
    CONNECTOR_PACKAGES,
    SCALA_BINARY_VERSION,
    SPARK_MINOR_VERSION,
    local_jars_for,
    maven_repository_path,
    packages_for,
    spark_conf_for,
)

KAFKA = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.3"
DELTA = "io.delta:delta-spark_4.1_2.13:4.4.0"
ICEBERG = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
POSTGRESQL = "org.postgresql:postgresql:42.7.14"
COORDINATE = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")


@pytest.mark.parametrize(
    ("format_name", "package"),
    [
        ("kafka", KAFKA),
        ("kafkajson", KAFKA),
        ("delta", DELTA),
        ("iceberg", ICEBERG),
        ("jdbc", POSTGRESQL),
    ],
)
def test_each_connector_format_names_its_verified_package(format_name: str, package: str) -> None:
    assert packages_for([format_name]) == [package]


@pytest.mark.parametrize("format_name", ["json", "csv", "parquet", "text", "rate", "console"])
def test_formats_spark_reads_itself_need_no_package(format_name: str) -> None:
    assert packages_for([format_name]) == []
    assert spark_conf_for([format_name]) == {}
    assert local_jars_for([format_name]) == []


def test_packages_come_once_in_first_seen_order() -> None:
    formats = ["iceberg", "kafkajson", "parquet", "kafka", "delta", "iceberg", "jdbc"]

    assert packages_for(formats) == [ICEBERG, KAFKA, DELTA, POSTGRESQL]


def test_extra_packages_follow_the_connectors_without_duplicates() -> None:
    extra = ["com.example:udfs:1.0", KAFKA, "com.example:udfs:1.0"]

    assert packages_for(["kafka"], extra) == [KAFKA, "com.example:udfs:1.0"]


def test_a_job_can_pin_its_own_version_of_a_connector() -> None:
    pinned = "io.delta:delta-spark_4.1_2.13:4.1.0"

    assert packages_for(["kafka", "delta"], [pinned]) == [KAFKA, pinned]


def test_a_malformed_extra_coordinate_is_refused() -> None:
    with pytest.raises(ValueError, match="'delta-spark' is not a Maven coordinate"):
        packages_for([], ["delta-spark"])


def test_delta_takes_over_the_session_catalog() -> None:
    assert spark_conf_for(["delta"]) == {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }


def test_delta_and_iceberg_extensions_are_joined() -> None:
    conf = spark_conf_for(["delta", "iceberg", "delta"])

    assert conf["spark.sql.extensions"] == (
        "io.delta.sql.DeltaSparkSessionExtension,"
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    )


def test_kafka_swaps_the_token_provider_spark_cannot_resolve_for_a_local_jar() -> None:
    token_provider = "org.apache.spark:spark-token-provider-kafka-0-10_2.13"

    assert spark_conf_for(["kafkajson"]) == {"spark.jars.excludes": token_provider}
    assert local_jars_for(["kafka", "kafkajson"]) == [f"{token_provider}:4.0.0"]


def test_jdbc_readers_and_writers_name_the_driver_class() -> None:
    assert CONNECTOR_PACKAGES["jdbc"].options == {"driver": "org.postgresql.Driver"}


def test_maven_repository_path_follows_the_maven_layout() -> None:
    path = maven_repository_path("org.apache.spark:spark-token-provider-kafka-0-10_2.13:4.0.0")

    assert path == PurePosixPath(
        "org/apache/spark/spark-token-provider-kafka-0-10_2.13/4.0.0/"
        "spark-token-provider-kafka-0-10_2.13-4.0.0.jar"
    )


def test_every_coordinate_is_well_formed() -> None:
    for connector in CONNECTOR_PACKAGES.values():
        for coordinate in (*connector.packages, *connector.local_jars):
            assert COORDINATE.fullmatch(coordinate), coordinate


def test_the_table_matches_the_installed_pyspark() -> None:
    """A pyspark upgrade must come with connectors built for its Spark and Scala versions."""
    major, minor, *_ = version("pyspark").split(".")

    assert f"{major}.{minor}" == SPARK_MINOR_VERSION
    assert SCALA_BINARY_VERSION == "2.13"  # every Spark 4 release is built for Scala 2.13 only
