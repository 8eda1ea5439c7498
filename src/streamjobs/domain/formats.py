"""The syntax of the small strings manifests hold: names, tags, intervals, URIs, coordinates.

Each syntax is one regular expression, a name and a rule in words. It checks values during parsing
(a broken rule says what was expected) and is published in the JSON Schema as ``pattern`` and
``description``, so editors flag the same mistakes. Patterns stay within what both Python and
JavaScript (JSON Schema's regex dialect) understand.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from streamjobs.domain.spark_sql import check_column_list

_SHOWN_VALUE_LENGTH = 60


class Syntax:
    """A string syntax for ``Annotated[str, Syntax(...)]``: checked in parsing, shown in schemas."""

    def __init__(self, name: str, pattern: str, rule: str) -> None:
        self.name = name
        self.pattern = pattern
        self.rule = rule
        self._regex = re.compile(pattern)

    def check(self, value: str) -> str:
        """Return ``value`` unchanged, or raise ``ValueError`` naming this syntax and its rule."""
        if self._regex.fullmatch(value) is None:
            raise ValueError(f"{_shown(value)} is not a valid {self.name}: {self.rule}")
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        described = self.name[:1].upper() + self.name[1:]
        json_schema.update(pattern=self.pattern, description=f"{described}: {self.rule}")
        return json_schema


def _shown(value: str) -> str:
    """``value`` quoted for a message, cut short when long."""
    if len(value) > _SHOWN_VALUE_LENGTH:
        value = value[: _SHOWN_VALUE_LENGTH - 3] + "..."
    return repr(value)


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_INTERVAL_UNIT = r"(weeks?|days?|hours?|minutes?|seconds?|milliseconds?|microseconds?)"
_IMAGE_PATH_COMPONENT = r"[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*"
_MAVEN_PART = r"[A-Za-z0-9_.-]+"

JobName = Annotated[
    str,
    Syntax(
        "job name",
        r"^(?!\.\.?$)[A-Za-z0-9_.-]([A-Za-z0-9_. -]{0,253}[A-Za-z0-9_.-])?$",
        "1-255 letters, digits, '-', '_', '.' or spaces, with no space at either end "
        "(and not '.' or '..')",
    ),
]
DnsLabel = Annotated[
    str,
    Syntax(
        "DNS label",
        rf"^{_DNS_LABEL}$",
        "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit",
    ),
]
TagKey = Annotated[
    str,
    Syntax(
        "tag key",
        rf"^((?=[^/]{{1,253}}/){_DNS_LABEL}(\.{_DNS_LABEL})*/)?{_LABEL_NAME}$",
        "as in Kubernetes labels, an optional DNS-subdomain prefix of at most 253 characters and "
        "'/', then a name of 1-63 letters, digits, '-', '_' or '.' that starts and ends with a "
        "letter or digit",
    ),
]
TagValue = Annotated[
    str,
    Syntax(
        "tag value",
        rf"^({_LABEL_NAME})?$",
        "as in Kubernetes labels, empty or 1-63 letters, digits, '-', '_' or '.' that start "
        "and end with a letter or digit",
    ),
]
ReferenceName = Annotated[
    str,
    Syntax(
        "name",
        r"^\S(.{0,253}\S)?$",
        "1-255 characters with no whitespace at either end",
    ),
]
SnapshotName = Annotated[
    str,
    Syntax(
        "snapshot name",
        r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
        "1-128 letters, digits, '-', '_' or '.', starting with a letter or digit",
    ),
]
Location = Annotated[
    str,
    Syntax("location", r"^\S(.*\S)?$", "a URI or a path with no whitespace at either end"),
]
SqlIdentifier = Annotated[
    str,
    Syntax(
        "view name",
        r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
        "a SQL identifier: a letter or '_', then letters, digits or '_' (at most 128 in all)",
    ),
]
DatasetReference = Annotated[
    str,
    Syntax(
        "dataset",
        r"^[A-Za-z0-9][A-Za-z0-9_.-]*:(?!//)\S(.*\S)?$",
        "<connection>:<topic, path or table>, e.g. 'kafka-main:orders' (a URI or a plain path "
        "goes under 'path' instead)",
    ),
]
SparkInterval = Annotated[
    str,
    Syntax(
        "Spark interval",
        rf"^(interval +)?[0-9]+ +{_INTERVAL_UNIT}( +[0-9]+ +{_INTERVAL_UNIT})*$",
        "whole numbers with lowercase units, e.g. '10 seconds', '500 milliseconds', '1 minute' "
        "or '1 hour 30 minutes'",
    ),
]
_MILLIS_PER_UNIT = {
    "week": 604_800_000,
    "day": 86_400_000,
    "hour": 3_600_000,
    "minute": 60_000,
    "second": 1_000,
    "millisecond": 1,
    "microsecond": 0.001,
}


def interval_millis(interval: str) -> float:
    """The length of a valid ``SparkInterval`` in milliseconds."""
    words = interval.split()
    if words[0] == "interval":
        words = words[1:]
    amounts, units = words[0::2], words[1::2]
    return sum(
        int(n) * _MILLIS_PER_UNIT[unit.rstrip("s")] for n, unit in zip(amounts, units, strict=True)
    )


JavaClassName = Annotated[
    str,
    Syntax(
        "Java class name",
        r"^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$",
        "a fully qualified class name, e.g. 'com.example.orders.OrdersJob'",
    ),
]
ApplicationFile = Annotated[
    str,
    Syntax(
        "application file",
        r"^(local://\S+|file://\S+|(?![A-Za-z][A-Za-z0-9+.-]*://)\S(.*\S)?)$",
        "local:///path or file:///path (a file on the machine that runs the driver), a path, or "
        "spark-internal (jvm only); other schemes such as http:// are not supported",
    ),
]
ImageReference = Annotated[
    str,
    Syntax(
        "container image",
        r"^(([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+(:[0-9]+)?/)?"
        rf"{_IMAGE_PATH_COMPONENT}(/{_IMAGE_PATH_COMPONENT})*"
        r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*:[0-9a-fA-F]{32,})?$",
        "registry/name:tag, e.g. 'registry.example.com/data/orders-job:1.4.0'",
    ),
]
MavenCoordinate = Annotated[
    str,
    Syntax(
        "Maven coordinate",
        rf"^{_MAVEN_PART}:{_MAVEN_PART}:{_MAVEN_PART}$",
        "group:artifact:version, e.g. 'org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.4'",
    ),
]
KubernetesQuantity = Annotated[
    str,
    Syntax(
        "Kubernetes quantity",
        r"^([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[kMGTPE]|m|[eE][-+]?[0-9]+)?$",
        "a number with an optional unit, e.g. '10Gi' or '500M'",
    ),
]
AbsolutePath = Annotated[
    str,
    Syntax("absolute path", r"^/\S*$", "a path that starts with '/', e.g. '/data'"),
]
EnvVarName = Annotated[
    str,
    Syntax(
        "environment variable name",
        r"^[A-Za-z_][A-Za-z0-9_]*$",
        "a letter or '_', then letters, digits or '_'",
    ),
]
SparkConfKey = Annotated[
    str,
    Syntax(
        "Spark configuration key",
        r"^spark\.\S+$",
        "a key that starts with 'spark.', e.g. 'spark.sql.shuffle.partitions'",
    ),
]


ConnectionName = Annotated[
    str,
    Syntax(
        "connection name",
        rf"^{_DNS_LABEL}$",
        "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit "
        "(jobs name it in 'dataset: <connection>:<rest>')",
    ),
]
_HOST = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
BootstrapServers = Annotated[
    str,
    Syntax(
        "list of bootstrap servers",
        rf"^{_HOST}:[0-9]{{1,5}}(,{_HOST}:[0-9]{{1,5}})*$",
        "host:port, several separated by commas, e.g. '127.0.0.1:9092' or "
        "'kafka-1:9092,kafka-2:9092'",
    ),
]
StorageRoot = Annotated[
    str,
    Syntax(
        "storage root",
        r"^([A-Za-z][A-Za-z0-9+.-]*:/\S*|/\S*)$",
        "a URI with a scheme, e.g. 'file:///data/lake' or 's3a://bucket/lake', or an absolute "
        "path such as '/data/lake'",
    ),
]
JdbcUrl = Annotated[
    str,
    Syntax(
        "JDBC URL",
        r"^jdbc:[A-Za-z][A-Za-z0-9]*:\S+$",
        "'jdbc:<driver>:<address>', e.g. 'jdbc:postgresql://127.0.0.1:5432/analytics'",
    ),
]
OptionKey = Annotated[
    str,
    Syntax(
        "option key",
        r"^\S+$",
        "one or more characters without whitespace, e.g. 'kafka.security.protocol'",
    ),
]


def _scalar_as_string(value: object) -> object:
    """Spark settings and environment variables are text: YAML's ``8`` and ``true`` mean theirs."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


ScalarString = Annotated[
    str, BeforeValidator(_scalar_as_string, json_schema_input_type=str | int | float | bool)
]
"""A string; numbers and booleans are accepted and kept as their text (``8`` -> ``"8"``)."""

SparkSchemaDdl = Annotated[str, AfterValidator(check_column_list)]
"""Columns in Spark DDL, e.g. ``id BIGINT, amount DECIMAL(12,2), ts TIMESTAMP``."""
