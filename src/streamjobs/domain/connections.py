"""Named connections: the data systems pipelines read and write, defined once, apart from jobs.

A ``Connection`` manifest says where a Kafka cluster, a lakehouse warehouse, a file root or a JDBC
database is, with the options every reader and writer of it needs. A job names it in
``dataset: <connection>:<rest>`` and so holds no addresses and no credentials: secrets are given by
name in ``secretOptions`` and resolved at launch, never as values.

``parse_connection`` checks one manifest (field rules, then the rules of its type) and reports
every broken rule at its field path; ``dataset_errors`` checks a job's datasets against the
connections there are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.json_schema import DEFAULT_REF_TEMPLATE

from streamjobs.domain.control_characters import CONNECTION_MULTI_LINE, refuse_control_characters
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.formats import (
    BootstrapServers,
    ConnectionName,
    JdbcUrl,
    OptionKey,
    ReferenceName,
    ScalarString,
    StorageRoot,
)
from streamjobs.domain.manifest import ManifestModel, Metadata, StreamingJob
from streamjobs.domain.spec import JSON_SCHEMA_DIALECT
from streamjobs.domain.validation import format_path, validated


class ConnectionType(StrEnum):
    """What kind of data system a connection reaches."""

    KAFKA = "kafka"
    LAKEHOUSE = "lakehouse"
    FILES = "files"
    JDBC = "jdbc"


class ConnectionMetadata(Metadata):
    """Who the connection is: its name (which jobs use in their datasets), namespace, tags."""

    name: ConnectionName
    """Unique; jobs name it in ``dataset: <connection>:<rest>``."""


class ConnectionSpec(ManifestModel):
    """Where the data system is and how to talk to it; which fields apply depends on ``type``."""

    type: ConnectionType
    bootstrap_servers: BootstrapServers | None = None
    """kafka only, and required there: host:port[,host:port]."""
    warehouse: StorageRoot | None = None
    """lakehouse only, and required there: the root of its Delta and Iceberg tables."""
    catalog_type: Literal["hadoop"] = "hadoop"
    """lakehouse only: the kind of Iceberg catalog kept in the warehouse."""
    root: StorageRoot | None = None
    """files only, and required there: the directory or URI dataset paths are under."""
    url: JdbcUrl | None = None
    """jdbc only, and required there."""
    user: ReferenceName | None = None
    """jdbc only: the database user (its password goes in secretOptions)."""
    options: dict[OptionKey, ScalarString] = Field(default_factory=dict)
    """Passed to every Spark reader and writer of the connection as given."""
    secret_options: dict[OptionKey, ReferenceName] = Field(default_factory=dict)
    """Option key -> name of the secret holding its value, resolved at launch."""

    @model_serializer(mode="wrap")
    def _catalog_type_for_lakehouses_only(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        """A connection of another type prints no catalogType, so it parses back unchanged."""
        data: dict[str, Any] = handler(self)
        if self.type is not ConnectionType.LAKEHOUSE:
            data.pop("catalogType", None)
            data.pop("catalog_type", None)
        return data


class Connection(ManifestModel):
    """A Connection manifest: one named data system that pipelines refer to."""

    api_version: Literal["streamjobs.io/v1"]
    kind: Literal["Connection"]
    metadata: ConnectionMetadata
    spec: ConnectionSpec

    @property
    def name(self) -> str:
        """The connection's name (``metadata.name``)."""
        return self.metadata.name


_REQUIRED_FIELD = {
    ConnectionType.KAFKA: ("bootstrapServers", "'127.0.0.1:9092'"),
    ConnectionType.LAKEHOUSE: ("warehouse", "'file:///var/lib/lakehouse' or 's3a://bucket/lake'"),
    ConnectionType.FILES: ("root", "'file:///data/landing' or 's3a://bucket/landing'"),
    ConnectionType.JDBC: ("url", "'jdbc:postgresql://127.0.0.1:5432/analytics'"),
}
_TYPE_OF_FIELD = {
    "bootstrapServers": ConnectionType.KAFKA,
    "warehouse": ConnectionType.LAKEHOUSE,
    "catalogType": ConnectionType.LAKEHOUSE,
    "root": ConnectionType.FILES,
    "url": ConnectionType.JDBC,
    "user": ConnectionType.JDBC,
}
_OPTIONS_SET_ELSEWHERE = {
    ConnectionType.KAFKA: {"kafka.bootstrap.servers": "set bootstrapServers instead"},
    ConnectionType.JDBC: {
        "url": "set url instead",
        "user": "set user instead",
        "dbtable": "each job's dataset names its table (<connection>:<table>)",
    },
    ConnectionType.FILES: {"path": "each job's dataset names its path under root"},
    ConnectionType.LAKEHOUSE: {"path": "each job's dataset names its table under warehouse"},
}
_SECRET_KEY_PARTS = ("password", "secret", "jaas.config")
"""An option key holding one of these (ignoring case) carries a secret value."""
_CREDENTIALS_IN_URI = re.compile(r"://[^/@\s]*:[^/@\s]*@|password=", re.IGNORECASE)
_LOCATIONS = ("warehouse", "root", "url")

_TYPES_FOR_FORMAT: dict[str, tuple[ConnectionType, ...]] = {
    "kafka": (ConnectionType.KAFKA,),
    "kafkajson": (ConnectionType.KAFKA,),
    "delta": (ConnectionType.LAKEHOUSE,),
    "iceberg": (ConnectionType.LAKEHOUSE,),
    "json": (ConnectionType.FILES, ConnectionType.LAKEHOUSE),
    "csv": (ConnectionType.FILES, ConnectionType.LAKEHOUSE),
    "parquet": (ConnectionType.FILES, ConnectionType.LAKEHOUSE),
    "text": (ConnectionType.FILES, ConnectionType.LAKEHOUSE),
    "jdbc": (ConnectionType.JDBC,),
}
"""Which types of connection a data format reads from or writes to."""


def parse_connection(document: Mapping[str, Any], *, source: str | None = None) -> Connection:
    """Parse and check one Connection manifest, or raise ``InvalidInput`` listing every broken
    rule at its field path. ``source`` (a file name, say) prefixes the error."""
    refuse_control_characters(document, multi_line=CONNECTION_MULTI_LINE, source=source)
    connection = validated(Connection, document, source=source)
    errors = list(_type_errors(connection.spec))
    errors += _option_errors(connection.spec)
    if errors:
        raise InvalidInput(errors, source=source)
    return connection


def connection_json_schema(ref_template: str = DEFAULT_REF_TEMPLATE) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the Connection manifest, for editors and the API
    (``ref_template`` places its definitions, e.g. in an OpenAPI document's components)."""
    schema = Connection.model_json_schema(by_alias=True, ref_template=ref_template)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "title": "Connection"}


def split_dataset(dataset: str) -> tuple[str, str]:
    """``"kafka-main:orders"`` -> ``("kafka-main", "orders")``: the connection and what follows."""
    name, separator, rest = dataset.partition(":")
    if not separator:
        raise ValueError(f"dataset {dataset!r} is not '<connection>:<topic, path or table>'")
    return name, rest


def connections_used(job: StreamingJob) -> set[str]:
    """The names of the connections the job's datasets refer to."""
    return {split_dataset(dataset)[0] for _, _, dataset in _datasets(job)}


def dataset_errors(job: StreamingJob, connections: Mapping[str, Connection]) -> list[FieldError]:
    """Every dataset of ``job`` that names a connection not in ``connections`` (by name), or one
    whose type does not fit the input's or output's format, at the dataset's path."""
    errors = []
    for path, data_format, dataset in _datasets(job):
        name, _ = split_dataset(dataset)
        connection = connections.get(name)
        if connection is None:
            known = ", ".join(sorted(connections)) or "none"
            errors.append(FieldError(path, f"connection {name!r} does not exist (known: {known})"))
            continue
        fitting = _TYPES_FOR_FORMAT.get(data_format)
        if fitting is not None and connection.spec.type not in fitting:
            errors.append(
                FieldError(
                    path,
                    f"format {data_format} needs a {' or '.join(fitting)} connection, "
                    f"but {name!r} is a {connection.spec.type} connection",
                )
            )
    return errors


def _datasets(job: StreamingJob) -> Iterator[tuple[str, str, str]]:
    """``(path, format, dataset)`` of every input and output that has a dataset, in manifest
    order."""
    pipeline = job.spec.pipeline
    if pipeline is None:
        return
    for index, source in enumerate(pipeline.inputs):
        if source.dataset is not None:
            path = f"spec.pipeline.inputs[{index}].dataset"
            yield path, source.format, source.dataset
    for index, sink in enumerate(pipeline.outputs):
        if sink.dataset is not None:
            path = f"spec.pipeline.outputs[{index}].dataset"
            yield path, sink.format, sink.dataset


def _type_errors(spec: ConnectionSpec) -> Iterator[FieldError]:
    """The field the type needs is there, no field of another type is, and no location holds
    credentials."""
    given = {key: value for key, value in _typed_fields(spec).items() if value is not None}
    required, example = _REQUIRED_FIELD[spec.type]
    if required not in given:
        yield FieldError(
            f"spec.{required}", f"a {spec.type} connection needs {required}, e.g. {example}"
        )
    for key in given:
        owner = _TYPE_OF_FIELD[key]
        if owner is not spec.type:
            yield FieldError(
                f"spec.{key}", f"{key} is for {owner} connections only, not {spec.type}; remove it"
            )
    for key in _LOCATIONS:
        value = given.get(key)
        if value is not None and _CREDENTIALS_IN_URI.search(value):
            yield FieldError(
                f"spec.{key}",
                "must not hold a password or other credentials, since manifests are not secret; "
                "give them in secretOptions as secret names, e.g. secretOptions: "
                "{password: <secret name>}",
            )


def _typed_fields(spec: ConnectionSpec) -> dict[str, str | None]:
    """The fields that belong to one type each, by manifest key; catalogType counts only when
    the manifest gave it (it has a default)."""
    catalog_type = spec.catalog_type if "catalog_type" in spec.model_fields_set else None
    return {
        "bootstrapServers": spec.bootstrap_servers,
        "warehouse": spec.warehouse,
        "catalogType": catalog_type,
        "root": spec.root,
        "url": spec.url,
        "user": spec.user,
    }


def _option_errors(spec: ConnectionSpec) -> Iterator[FieldError]:
    """Options hold no secret values and nothing a field or a job's dataset sets."""
    set_elsewhere = _OPTIONS_SET_ELSEWHERE.get(spec.type, {})
    for key in spec.options:
        path = format_path(["spec", "options", key])
        if any(part in key.lower() for part in _SECRET_KEY_PARTS):
            yield FieldError(
                path,
                "looks like a secret, and secret values never go in a manifest: give it in "
                f"secretOptions with the name of a secret, e.g. secretOptions: {{{key}: "
                "<secret name>}",
            )
        elif key in set_elsewhere:
            yield FieldError(path, f"{key} is not an option here: {set_elsewhere[key]}")
        if key in spec.secret_options:
            yield FieldError(
                format_path(["spec", "secretOptions", key]),
                f"{key} is in options too; give it in one place",
            )
