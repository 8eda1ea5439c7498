"""Every manifest rule: a manifest that breaks it, the exact path of the error and what it says."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import (
    ApplicationType,
    Deployment,
    Guarantee,
    InputFormat,
    LogLevel,
    OutputMode,
    RestartPolicyType,
    TriggerMode,
    parse_manifest,
)
from tests.unit.manifests import (
    DELETE,
    assert_error,
    changed,
    errors_of,
    jvm_manifest,
    parse,
    pipeline_manifest,
    python_manifest,
)

PIPELINE = pipeline_manifest()
INPUT = "spec.pipeline.inputs[0]"
STEP = "spec.pipeline.steps[0].sequence[0]"
OUTPUT = "spec.pipeline.outputs[0]"
STREAMING = "spec.pipeline.streaming"
KAFKA_JSON_INPUT = {
    "name": "orders",
    "dataset": "kafka-main:orders",
    "format": "kafkajson",
    "schema": "id BIGINT, ts TIMESTAMP",
}
EXACTLY_ONCE = ("spec.processing.guarantee", "EXACTLY_ONCE")
Changes = list[tuple[str, Any]]


def broken(base: dict[str, Any], changes: Changes, path: str, message_part: str, case: str) -> Any:
    """A rule-table row: ``base`` with ``changes`` fails at ``path``, saying ``message_part``."""
    return pytest.param(changed(base, *changes), path, message_part, id=case)


class TestValidManifests:
    @pytest.mark.parametrize("manifest", [pipeline_manifest(), python_manifest(), jvm_manifest()])
    def test_minimal_manifests_parse(self, manifest: dict[str, Any]) -> None:
        job = parse(manifest)
        assert job.name == manifest["metadata"]["name"]

    def test_snake_case_keys_are_accepted_too(self) -> None:
        application = {
            "type": "jvm",
            "main_class": "com.example.Job",
            "main_application_file": "app.jar",
        }
        manifest = changed(jvm_manifest(), ("spec.application", application))
        assert parse(manifest).spec.application.main_class == "com.example.Job"

    def test_a_mapping_that_is_not_a_dict_is_accepted(self) -> None:
        assert parse(MappingProxyType(pipeline_manifest())).name == "ticks"


class TestDocument:
    @pytest.mark.parametrize("document", [[], "text", None, 3])
    def test_a_document_that_is_not_a_mapping_is_an_error_at_the_root(self, document: Any) -> None:
        assert_error(document, "", "must be a mapping of keys to values")

    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(PIPELINE, [("apiVersion", "v1")], "apiVersion", "'streamjobs.io/v1'", "api"),
            broken(PIPELINE, [("kind", "Job")], "kind", "must be 'StreamingJob'", "kind"),
            broken(PIPELINE, [("metadata", DELETE)], "metadata", "is required", "no-metadata"),
            broken(PIPELINE, [("spec", DELETE)], "spec", "is required", "no-spec"),
            broken(PIPELINE, [("spec", [])], "spec", "must be a mapping", "spec-list"),
            broken(PIPELINE, [("specs", {})], "specs", "is not a field here", "unknown-key"),
        ],
    )
    def test_top_level_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_every_error_is_reported_at_once(self) -> None:
        manifest = changed(
            PIPELINE,
            ("metadata.name", "bad/name"),
            ("spec.restartPolicy.onFailureRetries", -1),
            ("spec.pipeline.explain", "maybe"),
        )
        paths = {error.path for error in errors_of(manifest)}
        assert paths == {
            "metadata.name",
            "spec.restartPolicy.onFailureRetries",
            "spec.pipeline.explain",
        }

    def test_every_cross_field_error_is_reported_at_once(self) -> None:
        manifest = changed(
            PIPELINE,
            ("spec.instance.executors", 2),
            (f"{STEP}.sql", "SELECT * FROM ghost"),
            (f"{OUTPUT}.name", "nowhere"),
        )
        paths = [error.path for error in errors_of(manifest)]
        assert sorted(paths) == sorted(["spec.instance.executors", f"{STEP}.sql", f"{OUTPUT}.name"])

    def test_source_prefixes_the_detail(self) -> None:
        with pytest.raises(InvalidInput) as caught:
            parse_manifest(changed(PIPELINE, ("kind", "Job")), source="jobs/ticks.yaml")
        assert caught.value.source == "jobs/ticks.yaml"
        assert caught.value.detail.startswith("jobs/ticks.yaml: kind: must be")


class TestErrorPaths:
    def test_list_items_are_indexed_and_aliases_are_camel_case(self) -> None:
        manifest = changed(PIPELINE, (f"{OUTPUT}.outputMode", "sometimes"))
        assert_error(manifest, f"{OUTPUT}.outputMode", "must be 'append', 'update' or 'complete'")

    def test_keys_that_are_not_plain_are_quoted(self) -> None:
        manifest = changed(PIPELINE, ("spec.configuration.sparkConf", {"spark.x": [1]}))
        assert_error(manifest, 'spec.configuration.sparkConf["spark.x"]', "must be a valid string")

    def test_union_member_tags_are_dropped(self) -> None:
        manifest = changed(PIPELINE, (f"{INPUT}.options", {"a": [1, {"b": float("nan")}]}))
        assert_error(manifest, f"{INPUT}.options.a[1].b", "must be a finite number")

    def test_a_key_that_breaks_its_syntax_is_the_path(self) -> None:
        manifest = changed(PIPELINE, ("spec.configuration.env", {"1BAD": "x"}))
        assert_error(manifest, 'spec.configuration.env["1BAD"]', "environment variable name")

    def test_a_snake_case_key_keeps_its_spelling_in_the_path(self) -> None:
        manifest = changed(PIPELINE, ("spec.pipeline.show_preview_lines", -1))
        assert_error(manifest, "spec.pipeline.show_preview_lines", "greater than or equal to 0")

    def test_messages_have_no_pydantic_boilerplate(self) -> None:
        manifest = changed(PIPELINE, ("metadata.name", "a/b"), ("spec.pipeline.explain", []))
        for error in errors_of(manifest):
            assert not error.message.startswith(("Value error", "Input should"))
            assert "pydantic" not in error.message

    def test_duplicate_errors_are_reported_once(self) -> None:
        errors = errors_of(changed(PIPELINE, (f"{INPUT}.options", {"a": {1, 2}})))
        assert len(errors) == len(set(errors))

    def test_every_error_is_a_field_error(self) -> None:
        for error in errors_of(changed(PIPELINE, ("spec.instance", {"deployment": "x"}))):
            assert isinstance(error, FieldError)


class TestMetadata:
    @pytest.mark.parametrize(
        "name", ["a", "orders to lake", "v1.2_final-job", "x" * 255, "...", "Orders.2024"]
    )
    def test_valid_names(self, name: str) -> None:
        assert parse(changed(PIPELINE, ("metadata.name", name))).name == name

    @pytest.mark.parametrize(
        "name", ["", "bad/name", " leading", "trailing ", "x" * 256, "tab\tname", ".", "..", "é"]
    )
    def test_invalid_names(self, name: str) -> None:
        manifest = changed(PIPELINE, ("metadata.name", name))
        assert_error(manifest, "metadata.name", "is not a valid job name: 1-255 letters, digits")

    def test_namespace_defaults_to_default(self) -> None:
        assert parse(PIPELINE).metadata.namespace == "default"

    @pytest.mark.parametrize("namespace", ["Upper", "under_score", "-dash", "x" * 64, ""])
    def test_namespace_must_be_a_dns_label(self, namespace: str) -> None:
        manifest = changed(PIPELINE, ("metadata.namespace", namespace))
        assert_error(manifest, "metadata.namespace", "is not a valid DNS label")

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("team", "payments"),
            ("example.com/owner", "a-b_c.d"),
            ("a", ""),
            ("x" * 63, "y" * 63),
            ("sub.example.com/" + "x" * 63, "v"),
            ("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61 + "/k", "v"),
        ],
    )
    def test_valid_tags(self, key: str, value: str) -> None:
        assert parse(changed(PIPELINE, ("metadata.tags", {key: value}))).metadata.tags == {
            key: value
        }

    @pytest.mark.parametrize(
        ("key", "path"),
        [
            ("bad key", 'metadata.tags["bad key"]'),
            ("x" * 64, "metadata.tags." + "x" * 64),
            ("-start", 'metadata.tags["-start"]'),
            ("end-", "metadata.tags.end-"),
            ("Upper.Example.com/k", 'metadata.tags["Upper.Example.com/k"]'),
            ("a" * 254 + "/k", f'metadata.tags["{"a" * 254}/k"]'),
            ("/k", 'metadata.tags["/k"]'),
        ],
    )
    def test_invalid_tag_keys(self, key: str, path: str) -> None:
        assert_error(changed(PIPELINE, ("metadata.tags", {key: "v"})), path, "not a valid tag key")

    @pytest.mark.parametrize("value", ["-start", "end.", "x" * 64, "has space", "a/b"])
    def test_invalid_tag_values(self, value: str) -> None:
        manifest = changed(PIPELINE, ("metadata.tags", {"team": value}))
        assert_error(manifest, "metadata.tags.team", "is not a valid tag value")

    def test_tag_values_are_strings(self) -> None:
        manifest = changed(PIPELINE, ("metadata.tags", {"tier": 1}))
        assert_error(manifest, "metadata.tags.tier", "must be a valid string")


class TestApplication:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [("spec.application.type", "scala")],
                "spec.application.type",
                "must be 'pipeline', 'python' or 'jvm'",
                "unknown-type",
            ),
            broken(
                PIPELINE,
                [("spec.application", {})],
                "spec.application.type",
                "is required",
                "no-type",
            ),
            broken(
                PIPELINE,
                [("spec.application", DELETE)],
                "spec.application",
                "is required",
                "no-application",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainClass", DELETE)],
                "spec.application.mainClass",
                "a jvm application needs mainClass",
                "jvm-without-main-class",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainClass", "com.example.Job")],
                "spec.application.mainClass",
                "mainClass is for jvm applications only, not python",
                "python-with-main-class",
            ),
            broken(
                PIPELINE,
                [("spec.application.mainClass", "com.example.Job")],
                "spec.application.mainClass",
                "mainClass is for jvm applications only, not pipeline",
                "pipeline-with-main-class",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainClass", "com.example.1Job")],
                "spec.application.mainClass",
                "is not a valid Java class name",
                "main-class-syntax",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", DELETE)],
                "spec.application.mainApplicationFile",
                "a python application needs mainApplicationFile, e.g. local:///app/job.py",
                "python-without-file",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainApplicationFile", DELETE)],
                "spec.application.mainApplicationFile",
                "a jvm application needs mainApplicationFile",
                "jvm-without-file",
            ),
            broken(
                PIPELINE,
                [("spec.application.mainApplicationFile", "local:///app/job.py")],
                "spec.application.mainApplicationFile",
                "a pipeline application has no mainApplicationFile",
                "pipeline-with-file",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", "spark-internal")],
                "spec.application.mainApplicationFile",
                "spark-internal is for jvm applications only",
                "python-spark-internal",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", "http://example.com/job.py")],
                "spec.application.mainApplicationFile",
                "other schemes such as http:// are not supported",
                "http-scheme",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainApplicationFile", "s3a://bucket/app.jar")],
                "spec.application.mainApplicationFile",
                "is not a valid application file",
                "s3a-scheme",
            ),
            broken(
                python_manifest(),
                [("spec.application.image", "Not An Image")],
                "spec.application.image",
                "is not a valid container image: registry/name:tag",
                "image-syntax",
            ),
            broken(
                python_manifest(),
                [("spec.application.arguments", ["--n", 3])],
                "spec.application.arguments[1]",
                "must be a valid string",
                "argument-not-string",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline", DELETE)],
                "spec.pipeline",
                "a pipeline application needs a pipeline block",
                "pipeline-without-block",
            ),
            broken(
                python_manifest(),
                [("spec.pipeline", PIPELINE["spec"]["pipeline"])],
                "spec.pipeline",
                "only pipeline applications have a pipeline block",
                "python-with-block",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    @pytest.mark.parametrize(
        "main_file",
        ["local:///app/job.py", "file:///opt/job.py", "jobs/job.py", "/opt/jobs/job.py"],
    )
    def test_python_file_locations(self, main_file: str) -> None:
        manifest = changed(python_manifest(), ("spec.application.mainApplicationFile", main_file))
        assert parse(manifest).spec.application.main_application_file == main_file

    def test_spark_internal_is_for_jvm(self) -> None:
        manifest = changed(
            jvm_manifest(), ("spec.application.mainApplicationFile", "spark-internal")
        )
        assert parse(manifest).spec.application.type is ApplicationType.JVM

    @pytest.mark.parametrize(
        "image",
        [
            "job",
            "library/python:3.11-slim",
            "registry.example.com:5000/team/orders-job:1.4.0",
            "ghcr.io/acme/job@sha256:" + "a" * 64,
        ],
    )
    def test_valid_images(self, image: str) -> None:
        manifest = changed(python_manifest(), ("spec.application.image", image))
        assert parse(manifest).spec.application.image == image

    def test_arguments_default_to_empty(self) -> None:
        assert parse(python_manifest()).spec.application.arguments == []


class TestStreaming:
    @pytest.mark.parametrize("mode", [TriggerMode.CONTINUOUS, TriggerMode.REAL_TIME])
    def test_timed_triggers_need_a_duration(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": str(mode)}))
        assert_error(
            manifest,
            f"{STREAMING}.triggerDuration",
            f"triggerMode {mode} needs a triggerDuration, e.g. '10 seconds'",
        )

    def test_processing_time_without_duration_runs_back_to_back(self) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": "ProcessingTime"}))
        pipeline = parse(manifest).spec.pipeline
        assert pipeline is not None
        assert pipeline.streaming.trigger_duration is None

    def test_streaming_block_may_be_omitted(self) -> None:
        pipeline = parse(changed(PIPELINE, (STREAMING, DELETE))).spec.pipeline
        assert pipeline is not None
        assert pipeline.streaming.trigger_mode is TriggerMode.PROCESSING_TIME
        assert pipeline.streaming.trigger_duration is None

    @pytest.mark.parametrize("mode", [TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW])
    def test_finite_triggers_take_no_duration(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerMode", str(mode)))
        assert_error(
            manifest, f"{STREAMING}.triggerDuration", f"triggerMode {mode} takes no triggerDuration"
        )

    @pytest.mark.parametrize("mode", [TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW])
    def test_finite_triggers_without_duration_are_valid(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": str(mode)}))
        assert parse(manifest).spec.pipeline is not None

    @pytest.mark.parametrize(
        "duration",
        ["10 seconds", "500 milliseconds", "1 minute", "1 hour 30 minutes", "interval 10 seconds"],
    )
    def test_valid_durations(self, duration: str) -> None:
        assert parse(changed(PIPELINE, (f"{STREAMING}.triggerDuration", duration)))

    @pytest.mark.parametrize(
        "duration", ["10", "ten seconds", "10 secs", "1.5 seconds", "-1 seconds", "10 Seconds"]
    )
    def test_invalid_durations(self, duration: str) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerDuration", duration))
        assert_error(manifest, f"{STREAMING}.triggerDuration", "is not a valid Spark interval")

    def test_unknown_trigger_mode(self) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerMode", "Sometimes"))
        assert_error(manifest, f"{STREAMING}.triggerMode", "must be 'ProcessingTime', 'Once'")

    def test_checkpoint_location_has_no_surrounding_whitespace(self) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.checkpointLocation", " /tmp/cp"))
        assert_error(manifest, f"{STREAMING}.checkpointLocation", "is not a valid location")


class TestPipelineSettings:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [("spec.pipeline.showPreviewLines", -1)],
                "spec.pipeline.showPreviewLines",
                "must be greater than or equal to 0",
                "negative-preview",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.logLevel", "VERBOSE")],
                "spec.pipeline.logLevel",
                "must be 'ALL', 'TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL' or 'OFF'",
                "log-level",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.batchMode", "sometimes")],
                "spec.pipeline.batchMode",
                "must be a valid boolean",
                "batch-mode",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.inputs", [])],
                "spec.pipeline.inputs",
                "at least 1 item",
                "no-inputs",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.outputs", [])],
                "spec.pipeline.outputs",
                "at least 1 item",
                "no-outputs",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.steps", [{"sequence": []}])],
                "spec.pipeline.steps[0].sequence",
                "at least 1 item",
                "empty-sequence",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.steps[0].sequence[0].sql", "")],
                f"{STEP}.sql",
                "at least 1 character",
                "empty-sql",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.showPreviewLines", 2**31)],
                "spec.pipeline.showPreviewLines",
                "less than or equal to 2147483647",
                "preview-overflows-java-int",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_defaults(self) -> None:
        pipeline = parse(PIPELINE).spec.pipeline
        assert pipeline is not None
        assert (pipeline.explain, pipeline.show_preview_lines, pipeline.batch_mode) == (
            False,
            0,
            False,
        )
        assert pipeline.log_level is LogLevel.INFO
        assert pipeline.streaming.trigger_mode is TriggerMode.PROCESSING_TIME
        assert pipeline.streaming.for_each_batch_mode is False
        assert pipeline.streaming.checkpoint_location is None
        assert pipeline.inputs[0].is_stream is True
        assert pipeline.outputs[0].output_mode is OutputMode.APPEND

    def test_steps_are_optional(self) -> None:
        manifest = changed(PIPELINE, ("spec.pipeline.steps", DELETE), (f"{OUTPUT}.name", "ticks"))
        assert parse(manifest).spec.pipeline is not None


class TestInputs:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [(f"{INPUT}.name", "1st")],
                f"{INPUT}.name",
                "is not a valid view name: a SQL identifier",
                "name-syntax",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "avro")],
                f"{INPUT}.format",
                "must be 'kafka', 'kafkajson', 'json', 'csv', 'parquet', 'text', 'delta', "
                "'iceberg' or 'rate'",
                "unknown-format",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "parquet")],
                f"{INPUT}.dataset",
                "a parquet input needs a dataset (<connection>:<topic, path or table>) or a path",
                "no-location",
            ),
            broken(
                PIPELINE,
                [
                    (f"{INPUT}.format", "parquet"),
                    (f"{INPUT}.dataset", "files:a"),
                    (f"{INPUT}.path", "/data/a"),
                ],
                f"{INPUT}.path",
                "a parquet input takes a dataset or a path, not both",
                "dataset-and-path",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.dataset", "files:a")],
                f"{INPUT}.dataset",
                "a rate input takes no dataset: it generates its own rows",
                "rate-with-dataset",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.path", "/data/a")],
                f"{INPUT}.path",
                "a rate input takes no path",
                "rate-with-path",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "parquet"), (f"{INPUT}.dataset", "no-connection")],
                f"{INPUT}.dataset",
                "is not a valid dataset: <connection>:<topic, path or table>",
                "dataset-without-connection",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "parquet"), (f"{INPUT}.dataset", "file:///data/a")],
                f"{INPUT}.dataset",
                "a URI or a plain path goes under 'path' instead",
                "dataset-that-is-a-uri",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "json"), (f"{INPUT}.path", "/landing")],
                f"{INPUT}.schema",
                "a streaming json input needs a schema: Spark cannot infer the columns of a "
                "stream; give its columns in Spark DDL",
                "streaming-json-without-schema",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.format", "csv"), (f"{INPUT}.path", "/landing")],
                f"{INPUT}.schema",
                "a streaming csv input needs a schema",
                "streaming-csv-without-schema",
            ),
            broken(
                PIPELINE,
                [(INPUT, {**KAFKA_JSON_INPUT, "isStream": False}), (f"{INPUT}.schema", DELETE)],
                f"{INPUT}.schema",
                "a kafkajson input needs a schema to parse the JSON in its values",
                "kafkajson-without-schema",
            ),
            broken(
                PIPELINE,
                [(INPUT, {**KAFKA_JSON_INPUT, "schema": "id"})],
                f"{INPUT}.schema",
                "is not a Spark DDL column list (e.g. 'id BIGINT, ts TIMESTAMP'): column 'id' "
                "has no type",
                "schema-column-without-type",
            ),
            broken(
                PIPELINE,
                [(INPUT, {**KAFKA_JSON_INPUT, "schema": "id BIGINT ts"})],
                f"{INPUT}.schema",
                "is not a Spark DDL column list",
                "schema-that-does-not-parse",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.watermark", {"column": "timestamp"})],
                f"{INPUT}.watermark.delay",
                "is required",
                "watermark-without-delay",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.watermark", {"column": "timestamp", "delay": "soon"})],
                f"{INPUT}.watermark.delay",
                "is not a valid Spark interval",
                "watermark-delay-syntax",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.badRecords", {"output": "evens"})],
                f"{INPUT}.badRecords",
                "badRecords is for kafkajson inputs only, not rate",
                "bad-records-not-kafkajson",
            ),
            broken(
                PIPELINE,
                [(INPUT, {**KAFKA_JSON_INPUT, "badRecords": {"output": "nowhere"}})],
                f"{INPUT}.badRecords.output",
                "'nowhere' names no output; outputs: evens",
                "bad-records-to-unknown-output",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.options", {"when": {1, 2}})],
                f"{INPUT}.options.when",
                "not a valid JSON value",
                "option-not-json",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.isStream", "perhaps")],
                f"{INPUT}.isStream",
                "must be a valid boolean",
                "is-stream-not-bool",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline.inputs[1]", {"name": "TICKS", "format": "rate"})],
                "spec.pipeline.inputs[1].name",
                "view 'TICKS' is already defined at spec.pipeline.inputs[0].name (view names "
                "ignore case); every input and step needs its own name",
                "duplicate-input",
            ),
            broken(
                PIPELINE,
                [(f"{INPUT}.shema", "id INT")],
                f"{INPUT}.shema",
                "is not a field here",
                "misspelt-key",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_a_batch_json_input_needs_no_schema(self) -> None:
        manifest = changed(
            PIPELINE,
            (INPUT, {"name": "ticks", "format": "json", "path": "/a", "isStream": False}),
            ("spec.pipeline.batchMode", True),
        )
        assert parse(manifest).spec.pipeline is not None

    def test_a_full_kafkajson_input(self) -> None:
        source = {
            **KAFKA_JSON_INPUT,
            "schema": "a STRUCT<b: INT, c: ARRAY<STRING>>, m MAP<STRING, INT> NOT NULL",
            "watermark": {"column": "ts", "delay": "10 minutes"},
            "options": {"startingOffsets": "earliest", "maxOffsetsPerTrigger": 100000},
            "badRecords": {"output": "rejected"},
        }
        manifest = changed(
            PIPELINE,
            (INPUT, source),
            (f"{STEP}.sql", "SELECT * FROM orders"),
            ("spec.pipeline.outputs[1]", {"name": "rejected", "format": "json", "path": "/r"}),
        )
        parsed = parse(manifest).spec.pipeline
        assert parsed is not None
        assert parsed.inputs[0].format is InputFormat.KAFKA_JSON
        assert parsed.inputs[0].schema_ddl == source["schema"]
        assert parsed.inputs[0].bad_records is not None


class TestSteps:
    def test_a_step_reads_only_views_defined_before_it(self) -> None:
        manifest = changed(PIPELINE, (f"{STEP}.sql", "SELECT * FROM ticks JOIN ghosts USING (v)"))
        assert_error(
            manifest,
            f"{STEP}.sql",
            "step 'evens' reads view 'ghosts', which no input or earlier step defines; "
            "defined so far: ticks",
        )

    def test_a_step_cannot_read_a_later_step(self) -> None:
        sequence = [
            {"name": "first", "sql": "SELECT * FROM second"},
            {"name": "second", "sql": "SELECT * FROM ticks"},
        ]
        manifest = changed(
            PIPELINE, ("spec.pipeline.steps[0].sequence", sequence), (f"{OUTPUT}.name", "second")
        )
        assert_error(manifest, f"{STEP}.sql", "step 'first' reads view 'second'")

    def test_a_step_cannot_read_itself(self) -> None:
        manifest = changed(PIPELINE, (f"{STEP}.sql", "SELECT * FROM evens"))
        assert_error(manifest, f"{STEP}.sql", "defined so far: ticks")

    def test_steps_read_earlier_steps_across_sequences(self) -> None:
        steps = [
            {"sequence": [{"name": "a", "sql": "SELECT * FROM ticks"}]},
            {
                "sequence": [
                    {"name": "b", "sql": "SELECT * FROM a"},
                    {"name": "evens", "sql": "SELECT * FROM A JOIN b USING (value)"},
                ]
            },
        ]
        assert parse(changed(PIPELINE, ("spec.pipeline.steps", steps))).spec.pipeline is not None

    def test_the_error_lists_earlier_steps_too(self) -> None:
        steps = [
            {"sequence": [{"name": "a", "sql": "SELECT * FROM ticks"}]},
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM nope"}]},
        ]
        assert_error(
            changed(PIPELINE, ("spec.pipeline.steps", steps)),
            "spec.pipeline.steps[1].sequence[0].sql",
            "defined so far: ticks, a",
        )

    @pytest.mark.parametrize(
        "sql",
        [
            "WITH recent AS (SELECT * FROM ticks) SELECT * FROM recent",
            "SELECT * FROM ticks t JOIN warehouse.dims d ON t.value = d.id",
            "SELECT * FROM catalog.db.table_a UNION ALL SELECT * FROM Ticks",
            "SELECT /*+ BROADCAST(d) */ * FROM ticks t JOIN ticks d ON t.value = d.value",
            "SELECT count(*) FROM ticks GROUP BY window(timestamp, '1 minute')",
            "SELECT * FROM ticks WHERE value IN (SELECT value FROM ticks)",
            "SELECT 1 AS one",
        ],
    )
    def test_what_is_not_a_pipeline_view_is_not_checked(self, sql: str) -> None:
        assert parse(changed(PIPELINE, (f"{STEP}.sql", sql))).spec.pipeline is not None

    @pytest.mark.parametrize(
        ("sql", "message_part"),
        [
            ("SELECT * FROM", "step 'evens' does not parse: Expected table name"),
            ("SELECT 'open", "step 'evens' does not parse: Error tokenizing"),
            ("SELECT 1; SELECT 2", "step 'evens' holds 2 statements; a step is one query"),
            ("DROP TABLE ticks", "step 'evens' is not a query (SELECT ...)"),
            ("-- nothing", "step 'evens' holds no query"),
        ],
    )
    def test_sql_that_is_not_one_query(self, sql: str, message_part: str) -> None:
        assert_error(changed(PIPELINE, (f"{STEP}.sql", sql)), f"{STEP}.sql", message_part)

    def test_a_step_cannot_reuse_an_input_name(self) -> None:
        assert_error(
            changed(PIPELINE, (f"{STEP}.name", "ticks"), (f"{OUTPUT}.name", "ticks")),
            f"{STEP}.name",
            "view 'ticks' is already defined at spec.pipeline.inputs[0].name",
        )

    def test_step_names_are_unique_across_steps(self) -> None:
        steps = [
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]},
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]},
        ]
        assert_error(
            changed(PIPELINE, ("spec.pipeline.steps", steps)),
            "spec.pipeline.steps[1].sequence[0].name",
            f"view 'evens' is already defined at {STEP}.name",
        )


class TestOutputs:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [(f"{OUTPUT}.name", "nowhere")],
                f"{OUTPUT}.name",
                "output 'nowhere' names no view; an output writes the input or step of its "
                "name, one of: ticks, evens",
                "name-not-a-view",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "avro")],
                f"{OUTPUT}.format",
                "must be 'parquet', 'json', 'csv', 'delta', 'iceberg', 'kafka', 'jdbc' or "
                "'console'",
                "unknown-format",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.path", DELETE)],
                f"{OUTPUT}.dataset",
                "a parquet output needs a dataset",
                "no-location",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.dataset", "lake:evens")],
                f"{OUTPUT}.path",
                "a parquet output takes a dataset or a path, not both",
                "dataset-and-path",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "console")],
                f"{OUTPUT}.path",
                "a console output takes no path: it prints to the driver's log",
                "console-with-path",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "jdbc"), (f"{OUTPUT}.options", {"keyColumns": "id"})],
                f"{OUTPUT}.options.keyColumns",
                "keyColumns must be a list of column names",
                "key-columns-not-a-list",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.options", {"keyColumns": []})],
                f"{OUTPUT}.options.keyColumns",
                "keyColumns must be a list of column names",
                "key-columns-empty",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.outputMode", "overwrite")],
                f"{OUTPUT}.outputMode",
                "must be 'append', 'update' or 'complete'",
                "output-mode",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_an_output_may_write_an_input(self) -> None:
        assert parse(changed(PIPELINE, (f"{OUTPUT}.name", "ticks"))).spec.pipeline is not None

    def test_a_console_output_needs_no_location(self) -> None:
        output = {"name": "evens", "format": "console", "outputMode": "update"}
        assert parse(changed(PIPELINE, (OUTPUT, output))).spec.pipeline is not None

    def test_a_jdbc_upsert(self) -> None:
        output = {
            "name": "evens",
            "format": "jdbc",
            "dataset": "warehouse:public.evens",
            "options": {"keyColumns": ["value"], "saveMode": "append"},
        }
        parsed = parse(changed(PIPELINE, (OUTPUT, output), EXACTLY_ONCE), "file:///cp")
        assert parsed.spec.pipeline is not None
        assert parsed.spec.pipeline.outputs[0].options["keyColumns"] == ["value"]


class TestConfiguration:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [("spec.configuration.sparkConf", {"sql.shuffle.partitions": "8"})],
                'spec.configuration.sparkConf["sql.shuffle.partitions"]',
                "is not a valid Spark configuration key: a key that starts with 'spark.'",
                "spark-conf-key",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.sparkConfSecrets", {"hadoop.secret": "s"})],
                'spec.configuration.sparkConfSecrets["hadoop.secret"]',
                "is not a valid Spark configuration key",
                "spark-conf-secret-key",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.sparkConf", {"spark.x": {"nested": 1}})],
                'spec.configuration.sparkConf["spark.x"]',
                "must be a valid string",
                "spark-conf-not-scalar",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.env", {"MY-VAR": "x"})],
                "spec.configuration.env.MY-VAR",
                "is not a valid environment variable name",
                "env-name",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.envSecrets", {"API_KEY": " "})],
                "spec.configuration.envSecrets.API_KEY",
                "is not a valid name",
                "env-secret-name",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.javaOptions", ["-Xmx1g"])],
                "spec.configuration.javaOptions",
                "must be a valid string",
                "java-options",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.configMaps", [""])],
                "spec.configuration.configMaps[0]",
                "is not a valid name",
                "config-map-name",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_scalar_values_are_kept_as_text(self) -> None:
        values = {"spark.a": 8, "spark.b": True, "spark.c": False, "spark.d": 0.5, "spark.e": "x"}
        manifest = changed(
            PIPELINE, ("spec.configuration", {"sparkConf": values, "env": {"N": 3, "DEBUG": True}})
        )
        configuration = parse(manifest).spec.configuration
        assert configuration.spark_conf == {
            "spark.a": "8",
            "spark.b": "true",
            "spark.c": "false",
            "spark.d": "0.5",
            "spark.e": "x",
        }
        assert configuration.env == {"N": "3", "DEBUG": "true"}

    def test_secrets_are_names(self) -> None:
        manifest = changed(
            PIPELINE,
            ("spec.configuration.envSecrets", {"API_KEY": "payments-api-key"}),
            ("spec.configuration.sparkConfSecrets", {"spark.hadoop.fs.s3a.secret.key": "s3"}),
        )
        configuration = parse(manifest).spec.configuration
        assert configuration.env_secrets == {"API_KEY": "payments-api-key"}
        assert configuration.spark_conf_secrets == {"spark.hadoop.fs.s3a.secret.key": "s3"}


class TestDependencies:
    @pytest.mark.parametrize(
        "package", ["org.apache.spark", "a:b", "a:b:c:d", "a:b:", "a b:c:d", ":b:c"]
    )
    def test_packages_are_maven_coordinates(self, package: str) -> None:
        manifest = changed(PIPELINE, ("spec.dependencies.packages", [package]))
        message_part = "is not a valid Maven coordinate: group:artifact:version"
        assert_error(manifest, "spec.dependencies.packages[0]", message_part)

    def test_valid_dependencies(self) -> None:
        dependencies = {
            "packages": ["org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.4"],
            "jars": ["file:///opt/jars/udfs.jar"],
            "files": ["local:///etc/app/conf.properties"],
            "pyFiles": ["libs/helpers.zip"],
        }
        parsed = parse(changed(PIPELINE, ("spec.dependencies", dependencies))).spec.dependencies
        assert parsed.py_files == ["libs/helpers.zip"]

    def test_locations_are_not_blank(self) -> None:
        manifest = changed(PIPELINE, ("spec.dependencies.jars", [" "]))
        assert_error(manifest, "spec.dependencies.jars[0]", "is not a valid location")


class TestInstance:
    @pytest.mark.parametrize(
        ("key", "value"), [("executor", "medium"), ("executors", 2), ("dynamic", False)]
    )
    def test_executor_fields_are_for_standard_only(self, key: str, value: Any) -> None:
        manifest = changed(PIPELINE, (f"spec.instance.{key}", value))
        assert_error(
            manifest,
            f"spec.instance.{key}",
            f"{key} is for deployment standard only; singleNode runs the whole job in its "
            f"driver (remove {key}, or set deployment: standard)",
        )

    def test_single_node_defaults(self) -> None:
        instance = parse(PIPELINE).spec.instance
        assert instance.deployment is Deployment.SINGLE_NODE
        assert (instance.driver, instance.executor, instance.executors) == ("small", None, None)
        assert (instance.dynamic, instance.volume) == (None, None)

    def test_standard_defaults(self) -> None:
        instance = parse(changed(PIPELINE, ("spec.instance.deployment", "standard"))).spec.instance
        assert (instance.executor, instance.executors, instance.dynamic) == ("medium", 1, False)

    def test_standard_keeps_what_is_given(self) -> None:
        given = {"deployment": "standard", "executor": "large", "executors": 4, "dynamic": True}
        instance = parse(changed(PIPELINE, ("spec.instance", given))).spec.instance
        assert (instance.executor, instance.executors, instance.dynamic) == ("large", 4, True)

    @pytest.mark.parametrize(
        ("instance", "path", "message_part"),
        [
            ({"deployment": "cluster"}, "spec.instance.deployment", "'singleNode' or 'standard'"),
            (
                {"deployment": "standard", "executors": 0},
                "spec.instance.executors",
                "must be greater than or equal to 1",
            ),
            ({"driver": ""}, "spec.instance.driver", "is not a valid name"),
            (
                {"volume": {"size": "ten gigs", "mountPath": "/data"}},
                "spec.instance.volume.size",
                "is not a valid Kubernetes quantity",
            ),
            (
                {"volume": {"size": "10Gi", "mountPath": "data"}},
                "spec.instance.volume.mountPath",
                "is not a valid absolute path",
            ),
            ({"volume": {"size": "10Gi"}}, "spec.instance.volume.mountPath", "is required"),
        ],
    )
    def test_rules(self, instance: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(changed(PIPELINE, ("spec.instance", instance)), path, message_part)

    @pytest.mark.parametrize("size", ["10Gi", "500M", "1.5Ti", "1e9", "100"])
    def test_volumes(self, size: str) -> None:
        volume = {"size": size, "mountPath": "/data"}
        parsed = parse(changed(PIPELINE, ("spec.instance.volume", volume))).spec.instance.volume
        assert parsed is not None
        assert parsed.size == size


class TestRestartPolicy:
    def test_defaults(self) -> None:
        policy = parse(PIPELINE).spec.restart_policy
        assert policy.type is RestartPolicyType.NEVER
        assert (
            policy.on_submission_failure_retries,
            policy.on_submission_failure_retry_interval,
            policy.on_failure_retries,
            policy.on_failure_retry_interval,
        ) == (1, 5, 1, 5)

    @pytest.mark.parametrize(
        ("key", "value", "message_part"),
        [
            ("type", "Sometimes", "must be 'Never', 'Always' or 'OnFailure'"),
            ("onSubmissionFailureRetries", -1, "must be greater than or equal to 0"),
            ("onFailureRetries", -1, "must be greater than or equal to 0"),
            ("onSubmissionFailureRetryInterval", 0, "must be greater than or equal to 1"),
            ("onFailureRetryInterval", 0, "must be greater than or equal to 1"),
            ("onFailureRetries", "many", "must be a valid integer"),
        ],
    )
    def test_rules(self, key: str, value: Any, message_part: str) -> None:
        manifest = changed(PIPELINE, (f"spec.restartPolicy.{key}", value))
        assert_error(manifest, f"spec.restartPolicy.{key}", message_part)

    def test_zero_retries_are_allowed(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 0, "onSubmissionFailureRetries": 0}
        parsed = parse(changed(PIPELINE, ("spec.restartPolicy", policy))).spec.restart_policy
        assert parsed.type is RestartPolicyType.ON_FAILURE


class TestProcessing:
    def test_defaults(self) -> None:
        processing = parse(PIPELINE).spec.processing
        assert processing.guarantee is Guarantee.AT_LEAST_ONCE
        assert processing.snapshot_interval_millis == 10000
        assert processing.suspend_on_failure is False
        assert processing.initial_snapshot_name is None

    @pytest.mark.parametrize(
        ("key", "value", "message_part"),
        [
            ("guarantee", "ALWAYS", "must be 'NONE', 'AT_LEAST_ONCE' or 'EXACTLY_ONCE'"),
            ("snapshotIntervalMillis", 0, "must be greater than 0"),
            ("suspendOnFailure", "later", "must be a valid boolean"),
            ("initialSnapshotName", "", "is not a valid name"),
        ],
    )
    def test_rules(self, key: str, value: Any, message_part: str) -> None:
        manifest = changed(PIPELINE, (f"spec.processing.{key}", value))
        assert_error(manifest, f"spec.processing.{key}", message_part)


class TestExactlyOnce:
    def test_needs_a_checkpoint_location(self) -> None:
        assert_error(
            changed(PIPELINE, EXACTLY_ONCE),
            f"{STREAMING}.checkpointLocation",
            "EXACTLY_ONCE needs a checkpoint location",
        )

    def test_a_checkpoint_root_is_enough(self) -> None:
        assert parse(changed(PIPELINE, EXACTLY_ONCE), checkpoint_root="file:///cp").spec

    def test_an_explicit_checkpoint_location_is_enough(self) -> None:
        manifest = changed(PIPELINE, EXACTLY_ONCE, (f"{STREAMING}.checkpointLocation", "/cp/a"))
        assert parse(manifest).spec

    @pytest.mark.parametrize("sink", ["kafka", "console"])
    def test_kafka_and_console_sinks_cannot_give_it(self, sink: str) -> None:
        output = {"name": "evens", "format": sink}
        if sink == "kafka":
            output["dataset"] = "kafka-main:evens"
        errors = errors_of(changed(PIPELINE, EXACTLY_ONCE, (OUTPUT, output)), "file:///cp")
        assert errors == (
            FieldError(
                f"{OUTPUT}.format",
                f"'{sink}' cannot give EXACTLY_ONCE; use AT_LEAST_ONCE or an idempotent sink "
                "(parquet, delta, iceberg, jdbc with keys)",
            ),
        )

    def test_a_jdbc_sink_needs_key_columns(self) -> None:
        output = {"name": "evens", "format": "jdbc", "dataset": "warehouse:public.evens"}
        assert_error(
            changed(PIPELINE, EXACTLY_ONCE, (OUTPUT, output)),
            f"{OUTPUT}.options.keyColumns",
            "'jdbc' without keyColumns cannot give EXACTLY_ONCE",
            checkpoint_root="file:///cp",
        )

    def test_continuous_processing_cannot_give_it(self) -> None:
        manifest = changed(PIPELINE, EXACTLY_ONCE, (f"{STREAMING}.triggerMode", "Continuous"))
        assert_error(
            manifest,
            f"{STREAMING}.triggerMode",
            "Continuous cannot give EXACTLY_ONCE (continuous processing is at-least-once)",
            checkpoint_root="file:///cp",
        )

    @pytest.mark.parametrize("guarantee", ["NONE", "AT_LEAST_ONCE"])
    def test_other_guarantees_accept_any_sink(self, guarantee: str) -> None:
        output = {"name": "evens", "format": "console"}
        manifest = changed(PIPELINE, ("spec.processing.guarantee", guarantee), (OUTPUT, output))
        assert parse(manifest).spec.processing.guarantee == guarantee

    def test_applications_checkpoint_on_their_own(self) -> None:
        manifest = changed(python_manifest(), EXACTLY_ONCE)
        assert parse(manifest).spec.processing.guarantee is Guarantee.EXACTLY_ONCE
