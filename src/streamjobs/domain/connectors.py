"""The Maven packages and Spark settings that each input and output format needs.

Spark itself reads files (json, csv, parquet, text) and has ``rate`` and ``console``; Kafka, Delta,
Iceberg and JDBC come as connector jars named in ``spark.jars.packages``, at versions that match
the installed pyspark (4.1.4, Scala 2.13). Each was checked on Maven Central and with a real
``local[1]`` session: Kafka read and write, a Delta table written and read back, an Iceberg table
in a Hadoop catalog, the PostgreSQL driver reaching a server.

Two facts shape the table:

- Spark publishes no 4.1.4 artifacts to Maven Central, so the Kafka connector is 4.1.3, the
  newest 4.1 release there.
- The Maven Central this project's machines reach has ``spark-token-provider-kafka-0-10_2.13``
  (which the Kafka connector depends on) only at 4.0.0. Spark's resolver would fail looking for
  4.1.3, so the Kafka connector excludes it and adds the 4.0.0 jar, which works with Spark 4.1,
  from the local Maven repository through ``spark.jars`` (``local_jars``).

A python or jvm job that names a connector's package in ``dependencies.packages`` itself (at any
version) gets the same resolution fixes (``RESOLVER_SETTINGS`` and ``local_jars``), but not the
connector's session settings, which such a program sets up its own way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType

SCALA_BINARY_VERSION = "2.13"
SPARK_MINOR_VERSION = "4.1"
KAFKA_CONNECTOR_VERSION = "4.1.3"
KAFKA_TOKEN_PROVIDER = f"org.apache.spark:spark-token-provider-kafka-0-10_{SCALA_BINARY_VERSION}"
DELTA_VERSION = "4.4.0"
ICEBERG_VERSION = "1.12.0"
POSTGRESQL_JDBC_VERSION = "42.7.14"
DELTA_EXTENSIONS = "io.delta.sql.DeltaSparkSessionExtension"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"

# Spark settings whose value is a comma-separated list: two connectors' values are joined.
LIST_SETTINGS = frozenset({"spark.sql.extensions", "spark.jars.excludes"})
RESOLVER_SETTINGS = ("spark.jars.excludes", "spark.jars.repositories", "spark.jars.ivySettings")
"""The settings that change what Spark's resolver fetches for ``spark.jars.packages``."""


@dataclass(frozen=True, eq=False)  # compared by identity: formats can share one
class ConnectorPackages:
    """What one format needs from Spark's session: jars, settings and reader/writer options."""

    packages: tuple[str, ...]
    """Maven coordinates for ``spark.jars.packages``."""
    spark_conf: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Settings the session needs before it starts (extensions, catalogs, exclusions)."""
    local_jars: tuple[str, ...] = ()
    """Coordinates Spark's resolver cannot fetch here; pass their jars from the local Maven
    repository (``~/.m2/repository/`` + ``maven_repository_path``) in ``spark.jars``."""
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Options every reader and writer of the format needs."""


_KAFKA = ConnectorPackages(
    packages=(
        f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY_VERSION}:{KAFKA_CONNECTOR_VERSION}",
    ),
    spark_conf=MappingProxyType({"spark.jars.excludes": KAFKA_TOKEN_PROVIDER}),
    local_jars=(f"{KAFKA_TOKEN_PROVIDER}:4.0.0",),
)
_DELTA = ConnectorPackages(
    packages=(
        f"io.delta:delta-spark_{SPARK_MINOR_VERSION}_{SCALA_BINARY_VERSION}:{DELTA_VERSION}",
    ),
    spark_conf=MappingProxyType(
        {
            "spark.sql.extensions": DELTA_EXTENSIONS,
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        }
    ),
)
_ICEBERG = ConnectorPackages(
    packages=(
        "org.apache.iceberg:"
        f"iceberg-spark-runtime-{SPARK_MINOR_VERSION}_{SCALA_BINARY_VERSION}:{ICEBERG_VERSION}",
    ),
    spark_conf=MappingProxyType({"spark.sql.extensions": ICEBERG_EXTENSIONS}),
)
_JDBC = ConnectorPackages(
    packages=(f"org.postgresql:postgresql:{POSTGRESQL_JDBC_VERSION}",),
    # The driver jar is not on the JVM's system class path, so DriverManager cannot find it by
    # URL alone ("No suitable driver"); naming the class makes Spark register it.
    options=MappingProxyType({"driver": "org.postgresql.Driver"}),
)

CONNECTOR_PACKAGES: Mapping[str, ConnectorPackages] = MappingProxyType(
    {"kafka": _KAFKA, "kafkajson": _KAFKA, "delta": _DELTA, "iceberg": _ICEBERG, "jdbc": _JDBC}
)
"""Formats that need a connector; every other format (json, parquet, rate...) needs none."""


def packages_for(formats: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """``spark.jars.packages`` for ``formats`` plus a job's own ``extra`` coordinates.

    Without duplicates, in first-seen order. An ``extra`` coordinate naming the same
    ``group:artifact`` as a connector at another version replaces the connector's, so a job can
    pin its own version.
    """
    wanted = [*_connector_field(formats, "packages"), *extra]
    chosen: dict[str, str] = {}
    for coordinate in wanted:
        chosen[_group_and_artifact(coordinate)] = coordinate
    return list(chosen.values())


def spark_conf_for(formats: Iterable[str], packages: Iterable[str] = ()) -> dict[str, str]:
    """The Spark settings ``formats`` need together, and the resolver settings of connectors
    named in ``packages``; list settings are joined with commas."""
    merged: dict[str, str] = {}
    named = [
        {key: value for key, value in connector.spark_conf.items() if key in RESOLVER_SETTINGS}
        for connector in connectors_named(packages)
    ]
    for settings in [*(connector.spark_conf for connector in _connectors(formats)), *named]:
        for key, value in settings.items():
            merged[key] = _merge_setting(key, merged.get(key), value)
    return merged


def local_jars_for(formats: Iterable[str], packages: Iterable[str] = ()) -> list[str]:
    """Coordinates of the jars to pass in ``spark.jars`` from the local Maven repository, for
    ``formats`` and for the connectors named in ``packages``."""
    named = [jar for connector in connectors_named(packages) for jar in connector.local_jars]
    return list(dict.fromkeys([*_connector_field(formats, "local_jars"), *named]))


def connectors_named(packages: Iterable[str]) -> list[ConnectorPackages]:
    """The connectors whose own package (``group:artifact``, any version) is in ``packages``."""
    named = {_group_and_artifact(coordinate) for coordinate in packages}
    found = [
        connector
        for connector in CONNECTOR_PACKAGES.values()
        if any(_group_and_artifact(package) in named for package in connector.packages)
    ]
    return list(dict.fromkeys(found))


def maven_repository_path(coordinate: str) -> PurePosixPath:
    """Where a Maven repository keeps the jar of ``group:artifact:version``."""
    group, artifact, version = _split(coordinate)
    return PurePosixPath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")


def _connectors(formats: Iterable[str]) -> list[ConnectorPackages]:
    found = (CONNECTOR_PACKAGES.get(name) for name in formats)
    return list(dict.fromkeys(connector for connector in found if connector is not None))


def _connector_field(formats: Iterable[str], name: str) -> list[str]:
    values: list[str] = []
    for connector in _connectors(formats):
        values.extend(getattr(connector, name))
    return values


def _merge_setting(key: str, current: str | None, added: str) -> str:
    if current is None or current == added:
        return added
    if key in LIST_SETTINGS:
        items = [*current.split(","), *added.split(",")]
        return ",".join(dict.fromkeys(items))
    raise ValueError(f"connectors disagree on Spark setting {key}: {current!r} and {added!r}")


def _group_and_artifact(coordinate: str) -> str:
    group, artifact, _ = _split(coordinate)
    return f"{group}:{artifact}"


def _split(coordinate: str) -> tuple[str, str, str]:
    parts = coordinate.split(":")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"{coordinate!r} is not a Maven coordinate group:artifact:version")
    return parts[0], parts[1], parts[2]
