"""Every Connection rule: a manifest that breaks it, the exact path of the error and what it says.
How a job's datasets are checked against the connections is in ``test_datasets_and_connections``."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.connections import (
    Connection,
    ConnectionType,
    connection_json_schema,
    parse_connection,
)
from streamjobs.domain.errors import InvalidInput
from tests.factories import (
    DELETE,
    changed,
    connection_manifest,
)


def errors_of(manifest: Any) -> list[str]:
    """``path: message`` of every error parsing ``manifest`` gives; fails the test if it parses."""
    with pytest.raises(InvalidInput) as caught:
        parse_connection(manifest)
    return [str(error) for error in caught.value.errors]


def assert_error(manifest: Any, path: str, message_part: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_connection(manifest)
    messages = [error.message for error in caught.value.errors if error.path == path]
    assert any(message_part in message for message in messages), (
        f"no error at {path!r} containing {message_part!r}; got: {caught.value.detail}"
    )


class TestValidConnections:
    def test_a_kafka_connection_with_options_and_secret_options(self) -> None:
        manifest = connection_manifest(
            "kafka-main",
            options={"kafka.security.protocol": "SASL_SSL", "maxOffsetsPerTrigger": 1000},
            secretOptions={"kafka.sasl.jaas.config": "kafka-jaas"},
        )
        manifest["metadata"].update(description="main cluster", tags={"team": "platform"})
        connection = parse_connection(manifest)
        assert connection.name == "kafka-main"
        assert connection.metadata.namespace == "default"
        assert connection.metadata.tags == {"team": "platform"}
        spec = connection.spec
        assert spec.type is ConnectionType.KAFKA
        assert spec.bootstrap_servers == "127.0.0.1:9092"
        assert spec.options == {
            "kafka.security.protocol": "SASL_SSL",
            "maxOffsetsPerTrigger": "1000",
        }
        assert spec.secret_options == {"kafka.sasl.jaas.config": "kafka-jaas"}

    @pytest.mark.parametrize(
        "servers", ["kafka:9092", "kafka-1:9092,kafka-2:9093", "[::1]:9092", "broker_1.local:1"]
    )
    def test_bootstrap_servers_take_hosts_names_and_ipv6(self, servers: str) -> None:
        manifest = connection_manifest(bootstrapServers=servers)
        assert parse_connection(manifest).spec.bootstrap_servers == servers

    @pytest.mark.parametrize("warehouse", ["file:///tmp/lake", "s3a://bucket/lake", "/data/lake"])
    def test_a_lakehouse_has_a_hadoop_catalog_by_default(self, warehouse: str) -> None:
        spec = parse_connection(connection_manifest("lake", "lakehouse", warehouse=warehouse)).spec
        assert (spec.warehouse, spec.catalog_type) == (warehouse, "hadoop")

    def test_a_jdbc_connection_names_its_password_secret(self) -> None:
        manifest = connection_manifest(
            "warehouse-db", "jdbc", user="streamjobs", secretOptions={"password": "db-password"}
        )
        spec = parse_connection(manifest).spec
        assert (spec.url, spec.user) == ("jdbc:postgresql://127.0.0.1:5432/analytics", "streamjobs")
        assert spec.secret_options == {"password": "db-password"}

    @pytest.mark.parametrize("connection_type", list(ConnectionType))
    def test_the_stored_form_parses_back_to_the_same_connection(
        self, connection_type: ConnectionType
    ) -> None:
        connection = parse_connection(connection_manifest("c", connection_type))
        stored = connection.model_dump(mode="json")
        assert parse_connection(stored) == connection
        assert ("catalogType" in stored["spec"]) == (connection_type is ConnectionType.LAKEHOUSE)

    def test_the_json_schema_describes_the_manifest(self) -> None:
        schema = connection_json_schema()
        assert schema["title"] == "Connection"
        assert schema["$schema"].endswith("2020-12/schema")
        assert {"apiVersion", "kind", "metadata", "spec"} <= schema["properties"].keys()


class TestFieldErrors:
    @pytest.mark.parametrize(
        ("path", "value", "message"),
        [
            ("metadata.name", "Kafka_Main", "not a valid connection name"),
            ("metadata.name", "a" * 64, "not a valid connection name"),
            ("metadata.namespace", "Default", "not a valid DNS label"),
            ("kind", "StreamingJob", "must be 'Connection'"),
            ("apiVersion", "v1", "must be 'streamjobs.io/v1'"),
            ("spec.type", "s3", "must be 'kafka', 'lakehouse', 'files' or 'jdbc'"),
            ("spec.bootstrapServers", "localhost", "not a valid list of bootstrap servers"),
            ("spec.bootstrapServers", "a:1, b:2", "not a valid list of bootstrap servers"),
            ("spec.options", ["a"], "must be a mapping"),
            ("spec.secretOptions.password", " pg", "not a valid name"),
            ("spec.bootstrap", "a:1", "is not a field here"),
        ],
    )
    def test_a_broken_field_is_named(self, path: str, value: Any, message: str) -> None:
        assert_error(changed(connection_manifest(), (path, value)), path, message)

    @pytest.mark.parametrize(
        ("connection_type", "path", "value", "message"),
        [
            ("lakehouse", "spec.warehouse", "data/lake", "not a valid storage root"),
            ("files", "spec.root", "landing", "not a valid storage root"),
            ("jdbc", "spec.url", "postgresql://db/analytics", "not a valid JDBC URL"),
            ("lakehouse", "spec.catalogType", "hive", "must be 'hadoop'"),
        ],
    )
    def test_a_broken_location_is_named(
        self, connection_type: str, path: str, value: str, message: str
    ) -> None:
        manifest = changed(connection_manifest("c", connection_type), (path, value))
        assert_error(manifest, path, message)

    def test_a_bad_tag_is_named_by_its_key(self) -> None:
        manifest = changed(connection_manifest(), ("metadata.tags", {"-bad": "x"}))
        assert_error(manifest, 'metadata.tags["-bad"]', "not a valid tag key")

    def test_an_option_key_with_whitespace_is_named_in_brackets(self) -> None:
        manifest = connection_manifest(options={"two words": "x"})
        assert_error(manifest, 'spec.options["two words"]', "not a valid option key")

    @pytest.mark.parametrize("document", [[], "text", None])
    def test_a_document_that_is_not_a_mapping_is_an_error_at_the_root(self, document: Any) -> None:
        assert errors_of(document) == [
            "a manifest must be a mapping of keys to values (apiVersion, kind, metadata, spec), "
            f"not a {'list' if isinstance(document, list) else type(document).__name__}"
        ]


class TestTypeRules:
    @pytest.mark.parametrize(
        ("connection_type", "required", "example"),
        [
            ("kafka", "bootstrapServers", "'127.0.0.1:9092'"),
            ("lakehouse", "warehouse", "'file:///var/lib/lakehouse' or 's3a://bucket/lake'"),
            ("files", "root", "'file:///data/landing' or 's3a://bucket/landing'"),
            ("jdbc", "url", "'jdbc:postgresql://127.0.0.1:5432/analytics'"),
        ],
    )
    def test_each_type_needs_its_field(
        self, connection_type: str, required: str, example: str
    ) -> None:
        manifest = changed(connection_manifest("c", connection_type), (f"spec.{required}", DELETE))
        assert errors_of(manifest) == [
            f"spec.{required}: a {connection_type} connection needs {required}, e.g. {example}"
        ]

    @pytest.mark.parametrize(
        ("connection_type", "key", "value", "owner"),
        [
            ("kafka", "warehouse", "file:///lake", "lakehouse"),
            ("kafka", "catalogType", "hadoop", "lakehouse"),
            ("files", "bootstrapServers", "a:1", "kafka"),
            ("lakehouse", "root", "/landing", "files"),
            ("lakehouse", "user", "ana", "jdbc"),
            ("jdbc", "root", "/landing", "files"),
        ],
    )
    def test_a_field_of_another_type_is_refused(
        self, connection_type: str, key: str, value: str, owner: str
    ) -> None:
        manifest = changed(connection_manifest("c", connection_type), (f"spec.{key}", value))
        assert errors_of(manifest) == [
            f"spec.{key}: {key} is for {owner} connections only, not {connection_type}; remove it"
        ]

    @pytest.mark.parametrize(
        ("connection_type", "key", "value"),
        [
            ("jdbc", "url", "jdbc:postgresql://db/analytics?user=a&password=hunter2"),
            ("jdbc", "url", "jdbc:sqlserver://db;databaseName=a;Password=hunter2"),
            ("lakehouse", "warehouse", "s3a://AKIA:secret@bucket/lake"),
            ("files", "root", "ftp://ana:hunter2@files.example.com/landing"),
        ],
    )
    def test_a_location_holding_credentials_is_refused(
        self, connection_type: str, key: str, value: str
    ) -> None:
        manifest = changed(connection_manifest("c", connection_type), (f"spec.{key}", value))
        assert_error(manifest, f"spec.{key}", "must not hold a password or other credentials")


class TestOptions:
    @pytest.mark.parametrize(
        ("key", "path"),
        [
            ("password", "spec.options.password"),
            ("kafka.sasl.jaas.config", 'spec.options["kafka.sasl.jaas.config"]'),
            ("kafka.ssl.truststore.password", 'spec.options["kafka.ssl.truststore.password"]'),
            ("fs.s3a.secret.key", 'spec.options["fs.s3a.secret.key"]'),
            ("clientSecret", "spec.options.clientSecret"),
        ],
    )
    def test_an_option_that_holds_a_secret_value_is_refused(self, key: str, path: str) -> None:
        manifest = connection_manifest(options={key: "hunter2"})
        assert_error(manifest, path, "give it in secretOptions with the name of a secret")

    def test_the_same_secret_keys_are_fine_as_secret_options(self) -> None:
        secrets = {"password": "a", "kafka.sasl.jaas.config": "b", "fs.s3a.secret.key": "c"}
        assert parse_connection(connection_manifest(secretOptions=secrets)).spec.secret_options

    @pytest.mark.parametrize(
        ("connection_type", "key", "path", "instead"),
        [
            (
                "kafka",
                "kafka.bootstrap.servers",
                'spec.options["kafka.bootstrap.servers"]',
                "set bootstrapServers instead",
            ),
            ("jdbc", "url", "spec.options.url", "set url instead"),
            ("jdbc", "user", "spec.options.user", "set user instead"),
            ("jdbc", "dbtable", "spec.options.dbtable", "each job's dataset names its table"),
            ("files", "path", "spec.options.path", "each job's dataset names its path under root"),
            (
                "lakehouse",
                "path",
                "spec.options.path",
                "each job's dataset names its table under warehouse",
            ),
        ],
    )
    def test_an_option_a_field_or_a_dataset_sets_is_refused(
        self, connection_type: str, key: str, path: str, instead: str
    ) -> None:
        manifest = connection_manifest("c", connection_type, options={key: "x"})
        assert_error(manifest, path, f"{key} is not an option here: {instead}")

    def test_a_key_in_options_and_secret_options_is_refused(self) -> None:
        manifest = connection_manifest(
            options={"kafka.sasl.mechanism": "PLAIN"},
            secretOptions={"kafka.sasl.mechanism": "mechanism"},
        )
        assert errors_of(manifest) == [
            'spec.secretOptions["kafka.sasl.mechanism"]: kafka.sasl.mechanism is in options too; '
            "give it in one place"
        ]

    def test_every_broken_rule_is_reported_at_once(self) -> None:
        manifest = connection_manifest(
            "c",
            "kafka",
            warehouse="/lake",
            options={"password": "x", "kafka.bootstrap.servers": "a:1"},
        )
        del manifest["spec"]["bootstrapServers"]
        paths = [line.split(": ")[0] for line in errors_of(manifest)]
        assert paths == [
            "spec.bootstrapServers",
            "spec.warehouse",
            "spec.options.password",
            'spec.options["kafka.bootstrap.servers"]',
        ]


def test_a_connection_is_a_pydantic_model_of_the_manifest() -> None:
    connection = parse_connection(connection_manifest())
    assert isinstance(connection, Connection)
    assert connection.kind == "Connection"
    assert connection.api_version == "streamjobs.io/v1"
