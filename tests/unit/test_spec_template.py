"""What parse_manifest's results turn into: the resolved template, checkpoint paths, JSON Schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from streamjobs.domain.spec import (
    derived_checkpoint_location,
    manifest_json_schema,
    parse_manifest,
    resolved_template,
)
from tests.unit.manifests import changed, parse, pipeline_manifest, python_manifest

ROOT = "file:///var/lib/streamjobs/checkpoints"


class TestResolvedTemplate:
    def test_every_default_is_filled_in(self) -> None:
        template = resolved_template(parse(pipeline_manifest()), checkpoint_root=ROOT)
        assert template == {
            "apiVersion": "streamjobs.io/v1",
            "kind": "StreamingJob",
            "metadata": {"name": "ticks", "description": None, "namespace": "default", "tags": {}},
            "spec": {
                "bundle": "default",
                "runAs": None,
                "application": {
                    "type": "pipeline",
                    "mainClass": None,
                    "mainApplicationFile": None,
                    "image": None,
                    "arguments": [],
                },
                "pipeline": {
                    "explain": False,
                    "showPreviewLines": 0,
                    "logLevel": "INFO",
                    "batchMode": False,
                    "streaming": {
                        "triggerMode": "ProcessingTime",
                        "triggerDuration": "5 seconds",
                        "forEachBatchMode": False,
                        "checkpointLocation": f"{ROOT}/default/ticks",
                        "lowLatency": False,
                    },
                    "inputs": [
                        {
                            "name": "ticks",
                            "dataset": None,
                            "path": None,
                            "format": "rate",
                            "schema": None,
                            "isStream": True,
                            "watermark": None,
                            "options": {},
                            "badRecords": None,
                        }
                    ],
                    "steps": [{"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]}],
                    "outputs": [
                        {
                            "name": "evens",
                            "dataset": None,
                            "path": "/tmp/out/ticks/evens",
                            "format": "parquet",
                            "outputMode": "append",
                            "options": {},
                        }
                    ],
                },
                "configuration": {
                    "env": {},
                    "envSecrets": {},
                    "sparkConf": {},
                    "sparkConfSecrets": {},
                    "javaOptions": None,
                    "configMaps": [],
                },
                "dependencies": {"jars": [], "files": [], "pyFiles": [], "packages": []},
                "instance": {
                    "deployment": "singleNode",
                    "deployMode": None,
                    "driver": "small",
                    "executor": None,
                    "executors": None,
                    "dynamic": None,
                    "minExecutors": None,
                    "initialExecutors": None,
                    "standby": False,
                    "volume": None,
                },
                "restartPolicy": {
                    "type": "Never",
                    "onSubmissionFailureRetries": 1,
                    "onSubmissionFailureRetryInterval": 5,
                    "onFailureRetries": 1,
                    "onFailureRetryInterval": 5,
                    "backoff": "fixed",
                    "maxInterval": 300,
                    "resetAfterSeconds": None,
                },
                "processing": {
                    "guarantee": "AT_LEAST_ONCE",
                    "snapshotIntervalMillis": None,
                    "snapshotsToKeep": 3,
                    "suspendOnFailure": False,
                    "initialSnapshotName": None,
                    "stateStore": "hdfs",
                },
                "notifications": [],
                "health": {"rules": []},
                "upgrade": {"rollbackWithinSeconds": 300},
            },
        }

    def test_an_explicit_checkpoint_location_is_kept(self) -> None:
        manifest = changed(
            pipeline_manifest(), ("spec.pipeline.streaming.checkpointLocation", "s3a://cp/ticks")
        )
        template = resolved_template(parse(manifest), checkpoint_root=ROOT)
        assert template["spec"]["pipeline"]["streaming"]["checkpointLocation"] == "s3a://cp/ticks"

    def test_an_application_has_no_pipeline_to_fill_in(self) -> None:
        template = resolved_template(parse(python_manifest()), checkpoint_root=ROOT)
        assert template["spec"]["pipeline"] is None

    def test_secrets_appear_by_name(self) -> None:
        manifest = changed(
            python_manifest(), ("spec.configuration.envSecrets", {"API_KEY": "payments-api-key"})
        )
        template = resolved_template(parse(manifest), checkpoint_root=ROOT)
        assert template["spec"]["configuration"]["envSecrets"] == {"API_KEY": "payments-api-key"}

    def test_standard_instance_defaults_are_filled_in(self) -> None:
        manifest = changed(python_manifest(), ("spec.instance.deployment", "standard"))
        instance = resolved_template(parse(manifest), checkpoint_root=ROOT)["spec"]["instance"]
        assert (instance["executor"], instance["executors"], instance["dynamic"]) == (
            "medium",
            1,
            False,
        )

    @pytest.mark.parametrize("manifest", [pipeline_manifest(), python_manifest()])
    def test_the_template_is_json_and_parses_to_itself(self, manifest: dict[str, Any]) -> None:
        template = resolved_template(parse(manifest), checkpoint_root=ROOT)
        reparsed = parse_manifest(json.loads(json.dumps(template, allow_nan=False)))
        assert resolved_template(reparsed, checkpoint_root=ROOT) == template


class TestDerivedCheckpointLocation:
    @pytest.mark.parametrize(
        ("root", "namespace", "name", "expected"),
        [
            ("file:///cp", "default", "ticks", "file:///cp/default/ticks"),
            ("file:///cp/", "team-a", "ticks", "file:///cp/team-a/ticks"),
            ("/var/cp", "default", "orders to lake", "/var/cp/default/orders%20to%20lake"),
            ("s3a://bucket/cp", "default", "v1.2_job", "s3a://bucket/cp/default/v1.2_job"),
        ],
    )
    def test_root_namespace_and_url_safe_name(
        self, root: str, namespace: str, name: str, expected: str
    ) -> None:
        manifest = changed(
            pipeline_manifest(), ("metadata.name", name), ("metadata.namespace", namespace)
        )
        assert derived_checkpoint_location(parse(manifest), root) == expected

    def test_names_that_differ_get_different_locations(self) -> None:
        jobs = [
            parse(changed(pipeline_manifest(), ("metadata.name", name)))
            for name in ["a b", "a-b", "a_b", "a.b"]
        ]
        locations = {derived_checkpoint_location(job, ROOT) for job in jobs}
        assert len(locations) == 4


class TestJsonSchema:
    def test_is_marked_as_a_json_schema_of_streaming_jobs(self) -> None:
        schema = manifest_json_schema()
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["title"] == "StreamingJob"
        assert schema["required"] == ["apiVersion", "kind", "metadata", "spec"]
        assert schema["additionalProperties"] is False

    def test_keys_are_camel_case(self) -> None:
        definitions = manifest_json_schema()["$defs"]
        assert {"restartPolicy", "runAs", "application", "pipeline"} <= set(
            definitions["JobSpec"]["properties"]
        )
        assert {"schema", "isStream", "badRecords"} <= set(definitions["Input"]["properties"])
        assert "pyFiles" in definitions["Dependencies"]["properties"]

    def test_every_block_forbids_unknown_keys(self) -> None:
        for name, definition in manifest_json_schema()["$defs"].items():
            if definition.get("type") == "object":
                assert definition["additionalProperties"] is False, name

    def test_string_syntaxes_are_published_as_patterns(self) -> None:
        name = manifest_json_schema()["$defs"]["Metadata"]["properties"]["name"]
        assert re.fullmatch(name["pattern"], "orders to lake")
        assert not re.fullmatch(name["pattern"], "orders/lake")

    def test_spark_conf_values_may_be_scalars(self) -> None:
        spark_conf = manifest_json_schema()["$defs"]["Configuration"]["properties"]["sparkConf"]
        [value_schema] = spark_conf["patternProperties"].values()
        assert {option["type"] for option in value_schema["anyOf"]} == {
            "string",
            "integer",
            "number",
            "boolean",
        }

    def test_is_json(self) -> None:
        assert json.loads(json.dumps(manifest_json_schema())) == manifest_json_schema()
