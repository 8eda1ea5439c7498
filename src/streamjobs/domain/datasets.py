"""Where each input and output of a pipeline lives, in Spark's own terms.

A manifest names data as ``dataset: <connection>:<rest>`` or as a plain ``path``. With the
connections and the secret values at hand, this module turns that into what a Spark reader or
writer takes: a data source name, a path or a table, and options. It is pure, so every resolution
is tested without Spark; the runner only applies the result. Secret values live only in
``options``; ``redacted()`` is what may be logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from streamjobs.domain.connections import Connection, ConnectionType, split_dataset
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.manifest import Input, InputFormat, Output, OutputFormat, Pipeline

REDACTED = "*****"
WRITER_SETTINGS = frozenset({"saveMode", "partitionBy", "keyColumns"})
"""Output options streamjobs acts on itself rather than handing to the Spark writer."""
KAFKA_TOPIC_OPTIONS = frozenset({"subscribe", "subscribePattern", "assign"})
POSTGRESQL_DRIVER = "org.postgresql.Driver"
ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog"

SPARK_SOURCE_OF_INPUT = {InputFormat.KAFKA: "kafka", InputFormat.KAFKA_JSON: "kafka"}


@dataclass(frozen=True)
class SparkLocation:
    """What a Spark reader or writer needs: ``format``, then ``path`` or ``table``, and options."""

    format: str
    options: dict[str, str] = field(default_factory=dict)
    path: str | None = None
    table: str | None = None
    secret_options: frozenset[str] = frozenset()
    """Keys of ``options`` whose values are secrets."""

    def redacted(self) -> dict[str, str]:
        """The options with every secret value masked: the only form fit for logs."""
        return {
            key: REDACTED if key in self.secret_options else value
            for key, value in self.options.items()
        }

    @property
    def where(self) -> str:
        """Path, table or source name, for messages."""
        return self.path or self.table or self.options.get("topic") or self.format


@dataclass(frozen=True)
class SparkSink(SparkLocation):
    """A location to write, with the settings streamjobs applies itself."""

    save_mode: str = "append"
    partition_by: tuple[str, ...] = ()
    key_columns: tuple[str, ...] = ()


class DatasetResolver:
    """Resolves the datasets of one pipeline with the given connections and secret values."""

    def __init__(
        self, *, connections: Mapping[str, Connection], secrets: Mapping[str, str]
    ) -> None:
        self._connections = connections
        self._secrets = secrets

    @property
    def secret_values(self) -> tuple[str, ...]:
        """Every secret value this resolver may put into options, to mask wherever text goes."""
        return tuple(self._secrets.values())

    def check(self, pipeline: Pipeline) -> None:
        """Resolve every input and output once, raising InvalidInput with all that fail."""
        resolutions: list[Callable[[], object]] = [
            *(
                partial(self.source, item, path=f"spec.pipeline.inputs[{index}]")
                for index, item in enumerate(pipeline.inputs)
            ),
            *(
                partial(self.sink, item, path=f"spec.pipeline.outputs[{index}]")
                for index, item in enumerate(pipeline.outputs)
            ),
        ]
        errors = [error for resolve in resolutions for error in _errors_of(resolve)]
        if errors:
            raise InvalidInput(errors)

    def source(self, item: Input, *, path: str) -> SparkLocation:
        """Where and how to read input ``item``; ``path`` locates it in the manifest."""
        spark_format = SPARK_SOURCE_OF_INPUT.get(item.format, item.format.value)
        own_options = _spark_options(item.options)
        base = self._located(item.dataset, item.path, spark_format, f"{path}.dataset")
        options = {**base.options, **own_options}
        if spark_format == "kafka" and item.dataset and not KAFKA_TOPIC_OPTIONS & options.keys():
            options["subscribe"] = split_dataset(item.dataset)[1]
        return SparkLocation(
            format=spark_format,
            options=options,
            path=base.path,
            table=base.table,
            secret_options=base.secret_options,
        )

    def sink(self, item: Output, *, path: str) -> SparkSink:
        """Where and how to write output ``item``; ``path`` locates it in the manifest."""
        spark_format = item.format.value
        base = self._located(item.dataset, item.path, spark_format, f"{path}.dataset")
        options = {**base.options, **_spark_options(item.options, skip=WRITER_SETTINGS)}
        if item.format is OutputFormat.KAFKA and item.dataset and "topic" not in options:
            options["topic"] = split_dataset(item.dataset)[1]
        return SparkSink(
            format=spark_format,
            options=options,
            path=base.path,
            table=base.table,
            secret_options=base.secret_options,
            save_mode=str(item.options.get("saveMode", "append")),
            partition_by=_names(item.options.get("partitionBy")),
            key_columns=_names(item.options.get("keyColumns")),
        )

    def _located(
        self, dataset: str | None, path: str | None, spark_format: str, where: str
    ) -> SparkLocation:
        if dataset is None:
            return SparkLocation(format=spark_format, path=path)
        name, rest = split_dataset(dataset)
        connection = self._connections.get(name)
        if connection is None:
            known = ", ".join(sorted(self._connections)) or "none"
            raise InvalidInput(
                [FieldError(where, f"connection {name!r} is not defined (known: {known})")]
            )
        options, secret_keys = self._connection_options(connection, where)
        spec = connection.spec
        if spec.type is ConnectionType.KAFKA:
            assert spec.bootstrap_servers is not None
            options["kafka.bootstrap.servers"] = spec.bootstrap_servers
            return SparkLocation(spark_format, options, secret_options=secret_keys)
        if spec.type is ConnectionType.JDBC:
            assert spec.url is not None
            options.update(url=spec.url, dbtable=rest)
            if spec.user:
                options["user"] = spec.user
            if spec.url.startswith("jdbc:postgresql:"):
                options.setdefault("driver", POSTGRESQL_DRIVER)
            return SparkLocation(spark_format, options, secret_options=secret_keys)
        if spec.type is ConnectionType.LAKEHOUSE and spark_format == "iceberg":
            return SparkLocation(
                spark_format, options, table=f"`{name}`.{rest}", secret_options=secret_keys
            )
        root = spec.warehouse if spec.type is ConnectionType.LAKEHOUSE else spec.root
        assert root is not None
        return SparkLocation(
            spark_format, options, path=_joined(root, rest), secret_options=secret_keys
        )

    def _connection_options(
        self, connection: Connection, where: str
    ) -> tuple[dict[str, str], frozenset[str]]:
        options = dict(connection.spec.options)
        missing = []
        for key, secret_name in connection.spec.secret_options.items():
            if secret_name in self._secrets:
                options[key] = self._secrets[secret_name]
            else:
                missing.append(secret_name)
        if missing:
            raise InvalidInput(
                [
                    FieldError(
                        where,
                        f"connection {connection.metadata.name!r} needs secret "
                        f"{name!r}, which is not available",
                    )
                    for name in missing
                ]
            )
        return options, frozenset(connection.spec.secret_options)


def secret_env_var(secret_name: str) -> str:
    """The environment variable a secret's value reaches the driver in: STREAMJOBS_SECRET_<NAME>."""
    return "STREAMJOBS_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", secret_name).upper()


def secrets_from_environment(
    environment: Mapping[str, str], connections: Iterable[Connection]
) -> dict[str, str]:
    """The values of the secrets the connections name, from the environment where present."""
    names = {name for c in connections for name in c.spec.secret_options.values()}
    return {
        name: environment[secret_env_var(name)]
        for name in names
        if secret_env_var(name) in environment
    }


def _errors_of(resolve: Callable[[], object]) -> list[FieldError]:
    try:
        resolve()
    except InvalidInput as error:
        return list(error.errors)
    return []


def iceberg_catalogs(connections: Iterable[Connection]) -> dict[str, str]:
    """Spark settings that make each lakehouse connection an Iceberg catalog of its name."""
    conf: dict[str, str] = {}
    for connection in connections:
        spec = connection.spec
        if spec.type is ConnectionType.LAKEHOUSE:
            prefix = f"spark.sql.catalog.{connection.metadata.name}"
            assert spec.warehouse is not None
            conf[prefix] = ICEBERG_CATALOG
            conf[f"{prefix}.type"] = spec.catalog_type
            conf[f"{prefix}.warehouse"] = spec.warehouse
    return conf


def _spark_options(
    options: Mapping[str, Any], *, skip: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Manifest options as the strings Spark takes; objects and lists become JSON."""
    return {key: _option_text(value) for key, value in options.items() if key not in skip}


def _option_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value)


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value)


def _joined(root: str, rest: str) -> str:
    return root.rstrip("/") + "/" + rest.lstrip("/")
