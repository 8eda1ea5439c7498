"""Trigger, source and sink combinations Spark cannot run are refused at validation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.manifests import DELETE, assert_error, changed, parse, pipeline_manifest

KAFKA_IN = {"name": "ticks", "format": "kafkajson", "dataset": "kafka-main:in", "schema": "a INT"}
KAFKA_OUT = {
    "name": "evens",
    "format": "kafka",
    "dataset": "kafka-main:out",
    "outputMode": "update",
}


def kafka_to_kafka(mode: str, **streaming: Any) -> dict[str, Any]:
    return changed(
        pipeline_manifest(),
        ("spec.pipeline.streaming", {"triggerMode": mode, "triggerDuration": "5 seconds"}),
        ("spec.pipeline.inputs[0]", KAFKA_IN),
        ("spec.pipeline.outputs[0]", KAFKA_OUT),
        *((f"spec.pipeline.streaming.{key}", value) for key, value in streaming.items()),
    )


@pytest.mark.parametrize("mode", ["Continuous", "RealTime"])
def test_kafka_to_kafka_runs_under_low_latency_triggers(mode: str) -> None:
    assert parse(kafka_to_kafka(mode)).spec.pipeline is not None


@pytest.mark.parametrize("mode", ["Continuous", "RealTime"])
def test_low_latency_triggers_refuse_file_sinks(mode: str) -> None:
    manifest = changed(
        kafka_to_kafka(mode),
        ("spec.pipeline.outputs[0]", {"name": "evens", "format": "parquet", "path": "/o"}),
    )
    assert_error(
        manifest, "spec.pipeline.outputs[0].format", f"a {mode} trigger cannot write parquet"
    )


def test_real_time_refuses_the_rate_source() -> None:
    manifest = changed(
        kafka_to_kafka("RealTime"), ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "rate"})
    )
    assert_error(manifest, "spec.pipeline.inputs[0].format", "cannot read rate inputs")


def test_continuous_reads_the_rate_source() -> None:
    manifest = changed(
        kafka_to_kafka("Continuous"),
        ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "rate"}),
    )
    assert parse(manifest).spec.pipeline is not None


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("spec.pipeline.inputs[0].watermark", {"column": "ts", "delay": "1 minute"}, "stateless"),
        ("spec.pipeline.inputs[0].badRecords", {"output": "evens"}, "bad records"),
        ("spec.pipeline.streaming.forEachBatchMode", True, "foreachBatch"),
    ],
)
def test_low_latency_triggers_are_stateless(path: str, value: Any, message: str) -> None:
    assert_error(changed(kafka_to_kafka("RealTime"), (path, value)), path, message)


def test_rate_is_streaming_only() -> None:
    manifest = changed(pipeline_manifest(), ("spec.pipeline.inputs[0].isStream", False))
    assert_error(manifest, "spec.pipeline.inputs[0].isStream", "only streams")


def test_a_pipeline_needs_a_stream_unless_it_is_a_batch_job() -> None:
    static = {"name": "ticks", "format": "parquet", "path": "/in", "isStream": False}
    manifest = changed(pipeline_manifest(), ("spec.pipeline.inputs[0]", static))
    assert_error(manifest, "spec.pipeline.inputs", "at least one input with isStream: true")
    batch = changed(
        manifest, ("spec.pipeline.batchMode", True), ("spec.pipeline.streaming", DELETE)
    )
    assert parse(batch).spec.pipeline is not None


def test_for_each_batch_mode_streams_one_input() -> None:
    second = {"name": "more", "format": "rate"}
    manifest = changed(
        pipeline_manifest(),
        ("spec.pipeline.inputs[1]", second),
        ("spec.pipeline.streaming.forEachBatchMode", True),
    )
    assert_error(manifest, "spec.pipeline.streaming.forEachBatchMode", "streams 2 (ticks, more)")


def test_exactly_once_file_outputs_need_the_file_sink_log() -> None:
    manifest = changed(
        pipeline_manifest(),
        ("spec.pipeline.streaming.forEachBatchMode", True),
        ("spec.processing", {"guarantee": "EXACTLY_ONCE"}),
    )
    assert_error(
        manifest, "spec.pipeline.outputs[0].format", "at-least-once", checkpoint_root="file:///c"
    )
    delta = {"name": "evens", "format": "delta", "path": "/tmp/delta"}
    fixed = changed(manifest, ("spec.pipeline.outputs[0]", delta))
    assert parse(fixed, checkpoint_root="file:///c").spec.pipeline is not None


def test_real_time_batches_last_at_least_five_seconds() -> None:
    manifest = changed(
        kafka_to_kafka("RealTime"), ("spec.pipeline.streaming.triggerDuration", "1 second")
    )
    assert_error(manifest, "spec.pipeline.streaming.triggerDuration", "at least 5 seconds")
    lowered = changed(
        manifest,
        (
            "spec.configuration",
            {"sparkConf": {"spark.sql.streaming.realTimeMode.minBatchDuration": "1s"}},
        ),
    )
    assert parse(lowered).spec.pipeline is not None


def test_real_time_writes_in_update_mode() -> None:
    manifest = changed(
        kafka_to_kafka("RealTime"), ("spec.pipeline.outputs[0].outputMode", "append")
    )
    assert_error(manifest, "spec.pipeline.outputs[0].outputMode", "set outputMode: update")
