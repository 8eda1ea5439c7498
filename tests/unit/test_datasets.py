"""Datasets resolve through connections to Spark formats, locations and options."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.connections import Connection, parse_connection
from streamjobs.domain.datasets import (
    REDACTED,
    DatasetResolver,
    iceberg_catalogs,
    secret_env_var,
    secrets_from_environment,
)
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.manifest import Input, Output
from tests.unit.manifests import changed, parse, pipeline_manifest


def connection(name: str, **spec: Any) -> Connection:
    return parse_connection(
        {
            "apiVersion": "streamjobs.io/v1",
            "kind": "Connection",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


CONNECTIONS = {
    c.name: c
    for c in (
        connection(
            "kafka-main",
            type="kafka",
            bootstrapServers="127.0.0.1:9092",
            secretOptions={"kafka.sasl.jaas.config": "kafka-jaas"},
        ),
        connection("lake", type="lakehouse", warehouse="file:///lake/"),
        connection("landing", type="files", root="/data/landing"),
        connection(
            "pg",
            type="jdbc",
            url="jdbc:postgresql://127.0.0.1:5432/db",
            user="etl",
            secretOptions={"password": "pg-password"},
        ),
    )
}
SECRETS = {"kafka-jaas": "jaas-value", "pg-password": "hunter2"}
RESOLVER = DatasetResolver(connections=CONNECTIONS, secrets=SECRETS)


def an_input(**fields: Any) -> Input:
    return Input.model_validate({"name": "orders", **fields})


def an_output(**fields: Any) -> Output:
    return Output.model_validate({"name": "orders", **fields})


def test_a_kafka_topic_is_subscribed_with_the_connection_servers() -> None:
    source = RESOLVER.source(
        an_input(
            format="kafkajson",
            dataset="kafka-main:orders",
            schema="id INT",
            options={"startingOffsets": "earliest", "maxOffsetsPerTrigger": 1000},
        ),
        path="spec.pipeline.inputs[0]",
    )
    assert source.format == "kafka"
    assert source.options["kafka.bootstrap.servers"] == "127.0.0.1:9092"
    assert source.options["subscribe"] == "orders"
    assert source.options["maxOffsetsPerTrigger"] == "1000"
    assert source.options["kafka.sasl.jaas.config"] == "jaas-value"
    assert source.redacted()["kafka.sasl.jaas.config"] == REDACTED


def test_an_explicit_subscription_wins_and_json_options_stay_json() -> None:
    source = RESOLVER.source(
        an_input(
            format="kafka",
            dataset="kafka-main:orders",
            options={"subscribePattern": "orders-.*", "startingOffsets": {"orders": {"0": 5}}},
        ),
        path="p",
    )
    assert "subscribe" not in source.options
    assert source.options["startingOffsets"] == '{"orders": {"0": 5}}'


@pytest.mark.parametrize(
    ("fields", "path", "table"),
    [
        ({"format": "delta", "dataset": "lake:raw/orders"}, "file:///lake/raw/orders", None),
        ({"format": "iceberg", "dataset": "lake:db.orders"}, None, "`lake`.db.orders"),
        ({"format": "parquet", "dataset": "landing:/in/orders"}, "/data/landing/in/orders", None),
        ({"format": "parquet", "path": "/plain/path"}, "/plain/path", None),
    ],
)
def test_files_and_tables_resolve_under_their_roots(
    fields: dict[str, Any], path: str | None, table: str | None
) -> None:
    source = RESOLVER.source(an_input(**fields), path="p")
    assert (source.path, source.table) == (path, table)


def test_a_jdbc_output_upserts_on_its_keys() -> None:
    sink = RESOLVER.sink(
        an_output(
            format="jdbc",
            dataset="pg:public.orders",
            options={"keyColumns": ["id"], "batchsize": 500},
        ),
        path="p",
    )
    assert sink.options == {
        "password": "hunter2",
        "url": "jdbc:postgresql://127.0.0.1:5432/db",
        "dbtable": "public.orders",
        "user": "etl",
        "driver": "org.postgresql.Driver",
        "batchsize": "500",
    }
    assert sink.key_columns == ("id",)
    assert sink.redacted()["password"] == REDACTED


def test_writer_settings_are_not_writer_options() -> None:
    sink = RESOLVER.sink(
        an_output(
            format="parquet", path="/out", options={"saveMode": "overwrite", "partitionBy": ["day"]}
        ),
        path="p",
    )
    assert sink.options == {}
    assert (sink.save_mode, sink.partition_by) == ("overwrite", ("day",))


def test_a_kafka_output_writes_the_dataset_topic() -> None:
    sink = RESOLVER.sink(an_output(format="kafka", dataset="kafka-main:scored"), path="p")
    assert sink.options["topic"] == "scored"


def test_unknown_connections_and_missing_secrets_are_named() -> None:
    manifest = changed(
        pipeline_manifest(),
        ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "kafka", "dataset": "nope:t"}),
        ("spec.pipeline.outputs[0]", {"name": "evens", "format": "jdbc", "dataset": "pg:t"}),
        ("spec.pipeline.steps", []),
        ("spec.pipeline.outputs[0].name", "ticks"),
    )
    pipeline = parse(manifest).spec.pipeline
    assert pipeline is not None
    resolver = DatasetResolver(connections=CONNECTIONS, secrets={})
    with pytest.raises(InvalidInput) as raised:
        resolver.check(pipeline)
    messages = {error.path: error.message for error in raised.value.errors}
    assert "connection 'nope' is not defined" in messages["spec.pipeline.inputs[0].dataset"]
    assert "needs secret 'pg-password'" in messages["spec.pipeline.outputs[0].dataset"]
    assert "hunter2" not in str(raised.value)


def test_secrets_come_from_the_environment() -> None:
    assert secret_env_var("pg-password") == "STREAMJOBS_SECRET_PG_PASSWORD"
    environment = {"STREAMJOBS_SECRET_PG_PASSWORD": "hunter2", "HOME": "/root"}
    assert secrets_from_environment(environment, CONNECTIONS.values()) == {"pg-password": "hunter2"}


def test_each_lakehouse_is_an_iceberg_catalog() -> None:
    assert iceberg_catalogs(CONNECTIONS.values()) == {
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.type": "hadoop",
        "spark.sql.catalog.lake.warehouse": "file:///lake/",
    }
