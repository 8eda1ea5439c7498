"""spec.pipeline.streaming.lowLatency: where it may be set, which outputs it lets track progress
asynchronously, and that an output's own options win."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.low_latency import (
    ASYNC_PROGRESS_INTERVAL_OPTION,
    ASYNC_PROGRESS_OPTION,
    LOW_LATENCY_PATH,
    async_progress_options,
    keeps_state,
    may_track_progress_async,
)
from streamjobs.domain.manifest import Output, Streaming
from tests.unit.manifests import (
    DELETE,
    EXACTLY_ONCE,
    assert_error,
    changed,
    parse,
    pipeline_manifest,
)

KAFKA_IN = {"name": "ticks", "format": "kafkajson", "dataset": "kafka-main:in", "schema": "a INT"}
KAFKA_OUT = {"name": "ticks", "format": "kafka", "dataset": "kafka-main:out"}


def low_latency(*changes: tuple[str, Any]) -> dict[str, Any]:
    """A Kafka -> Kafka pipeline, micro-batches back to back, asking for low latency."""
    return changed(
        pipeline_manifest(),
        ("spec.pipeline.streaming", {"lowLatency": True}),
        ("spec.pipeline.inputs[0]", KAFKA_IN),
        ("spec.pipeline.steps", DELETE),
        ("spec.pipeline.outputs[0]", KAFKA_OUT),
        *changes,
    )


def test_low_latency_is_off_unless_asked_for() -> None:
    pipeline = parse(pipeline_manifest()).spec.pipeline
    assert pipeline is not None
    assert pipeline.streaming.low_latency is False


@pytest.mark.parametrize("value", ["yes", "true", 1, None])
def test_low_latency_takes_a_boolean_only(value: Any) -> None:
    manifest = low_latency((LOW_LATENCY_PATH, value))
    assert_error(manifest, LOW_LATENCY_PATH, "boolean")


@pytest.mark.parametrize("duration", [None, "0 seconds", "1 second"])
def test_micro_batch_queries_writing_kafka_take_low_latency(duration: str | None) -> None:
    changes = [] if duration is None else [("spec.pipeline.streaming.triggerDuration", duration)]
    pipeline = parse(low_latency(*changes)).spec.pipeline
    assert pipeline is not None
    assert pipeline.streaming.low_latency is True


@pytest.mark.parametrize("mode", ["Once", "AvailableNow"])
def test_finite_triggers_refuse_low_latency(mode: str) -> None:
    manifest = low_latency(("spec.pipeline.streaming.triggerMode", mode))
    assert_error(manifest, LOW_LATENCY_PATH, f"a {mode} trigger reads what is there and ends")


@pytest.mark.parametrize("mode", ["Continuous", "RealTime"])
def test_continuous_and_real_time_refuse_low_latency(mode: str) -> None:
    manifest = low_latency(
        ("spec.pipeline.streaming.triggerMode", mode),
        ("spec.pipeline.streaming.triggerDuration", "5 seconds"),
        ("spec.pipeline.outputs[0].outputMode", "update"),
    )
    assert_error(manifest, LOW_LATENCY_PATH, f"a {mode} trigger")


def test_batch_jobs_refuse_low_latency() -> None:
    manifest = changed(
        pipeline_manifest(),
        ("spec.pipeline.batchMode", True),
        ("spec.pipeline.streaming", {"lowLatency": True}),
        ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "parquet", "path": "/in"}),
    )
    assert_error(manifest, LOW_LATENCY_PATH, "a batch job (batchMode)")


def test_pipelines_without_kafka_outputs_refuse_low_latency() -> None:
    manifest = low_latency(("spec.pipeline.outputs[0]", {"name": "ticks", "format": "console"}))
    assert_error(manifest, LOW_LATENCY_PATH, "this pipeline has none")


def test_for_each_batch_mode_refuses_low_latency() -> None:
    manifest = low_latency(("spec.pipeline.streaming.forEachBatchMode", True))
    assert_error(manifest, LOW_LATENCY_PATH, "forEachBatchMode writes with batch writers")


def output(**fields: Any) -> Output:
    return Output.model_validate({"name": "ticks", "format": "kafka", **fields})


@pytest.mark.parametrize(
    ("streaming", "fields", "expected"),
    [
        pytest.param({"lowLatency": True}, {}, True, id="kafka-back-to-back"),
        pytest.param(
            {"lowLatency": True, "triggerDuration": "1 second"}, {}, True, id="kafka-every-second"
        ),
        pytest.param({}, {}, False, id="not-asked-for"),
        pytest.param({"lowLatency": True}, {"format": "console"}, False, id="console"),
        pytest.param({"lowLatency": True}, {"format": "parquet"}, False, id="parquet"),
        pytest.param(
            {"lowLatency": True, "triggerMode": "Continuous", "triggerDuration": "1 second"},
            {},
            False,
            id="continuous",
        ),
    ],
)
def test_async_progress_tracking_only_where_spark_supports_it(
    streaming: dict[str, Any], fields: dict[str, Any], expected: bool
) -> None:
    assert may_track_progress_async(Streaming.model_validate(streaming), output(**fields)) is (
        expected
    )


def test_kafka_outputs_are_never_exactly_once() -> None:
    """Async progress tracking may replay batches after a crash: the guarantee that could not
    bear it is refused for Kafka outputs before the runner ever decides."""
    assert_error(
        low_latency(EXACTLY_ONCE, ("spec.pipeline.streaming.checkpointLocation", "/c")),
        "spec.pipeline.outputs[0].format",
        "cannot give EXACTLY_ONCE",
    )


def test_every_batch_is_still_logged_and_the_outputs_own_options_win() -> None:
    assert async_progress_options({"topic": "out"}) == {
        "topic": "out",
        ASYNC_PROGRESS_OPTION: "true",
        ASYNC_PROGRESS_INTERVAL_OPTION: "0",
    }
    assert async_progress_options({ASYNC_PROGRESS_OPTION: "false"}) == {
        ASYNC_PROGRESS_OPTION: "false",
        ASYNC_PROGRESS_INTERVAL_OPTION: "0",
    }
    assert async_progress_options({ASYNC_PROGRESS_INTERVAL_OPTION: "5000"}) == {
        ASYNC_PROGRESS_INTERVAL_OPTION: "5000",
        ASYNC_PROGRESS_OPTION: "true",
    }


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ({"Project", "Filter", "StreamingRelationV2"}, False),
        ({"Project", "Aggregate"}, True),
        ({"Deduplicate", "Project"}, True),
        ({"Join", "Project"}, True),
        ({"GlobalLimit", "LocalLimit"}, True),
    ],
)
def test_stateful_plans_are_told_apart(nodes: set[str], expected: bool) -> None:
    assert keeps_state(nodes) is expected
