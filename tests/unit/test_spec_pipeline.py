"""The pipeline's settings and inputs: a manifest that breaks each rule, the exact path of the
error and what it says."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.spec import (
    InputFormat,
    LogLevel,
    OutputMode,
    TriggerMode,
)
from tests.unit.manifests import (
    DELETE,
    INPUT,
    KAFKA_JSON_INPUT,
    OUTPUT,
    PIPELINE,
    STEP,
    STREAMING,
    assert_error,
    broken,
    changed,
    parse,
)


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
                [(INPUT, {**KAFKA_JSON_INPUT, "schema": "id BIGINT, note STRING, ID STRING"})],
                f"{INPUT}.schema",
                "names column 'ID' twice (Spark's column names ignore case)",
                "schema-naming-a-column-twice",
            ),
            broken(
                PIPELINE,
                [(INPUT, {**KAFKA_JSON_INPUT, "schema": "id BIGINT, _Corrupt_Record STRING"})],
                f"{INPUT}.schema",
                "column '_corrupt_record' is where a kafkajson input puts the values it cannot "
                "parse",
                "kafkajson-schema-with-the-corrupt-record-column",
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
            (STREAMING, DELETE),
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
