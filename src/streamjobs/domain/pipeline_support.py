"""What Spark can run: which triggers, sources and sinks go together.

Spark refuses some combinations only once a query starts (a continuous query reading files, a
foreachBatch query under a real-time trigger, ...). These rules refuse them at validation instead,
with the field path and what to choose, so a bad pipeline never reaches Spark.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from streamjobs.domain.errors import FieldError
from streamjobs.domain.formats import interval_millis
from streamjobs.domain.low_latency import low_latency_errors
from streamjobs.domain.manifest import (
    Guarantee,
    InputFormat,
    OutputFormat,
    OutputMode,
    Pipeline,
    TriggerMode,
)

KAFKA_INPUTS = frozenset({InputFormat.KAFKA, InputFormat.KAFKA_JSON})
FILE_OUTPUTS = frozenset({OutputFormat.PARQUET, OutputFormat.JSON, OutputFormat.CSV})
TRIGGER_SUPPORT: dict[TriggerMode, tuple[frozenset[InputFormat], frozenset[OutputFormat]]] = {
    TriggerMode.CONTINUOUS: (
        KAFKA_INPUTS | {InputFormat.RATE},
        frozenset({OutputFormat.KAFKA, OutputFormat.CONSOLE}),
    ),
    TriggerMode.REAL_TIME: (KAFKA_INPUTS, frozenset({OutputFormat.KAFKA, OutputFormat.CONSOLE})),
}
"""Triggers that only some sources and sinks support, and those they do."""
REAL_TIME_MIN_BATCH_SETTING = "spark.sql.streaming.realTimeMode.minBatchDuration"
REAL_TIME_MIN_BATCH_MILLIS = 5000


def support_errors(
    pipeline: Pipeline, guarantee: Guarantee, spark_conf: Mapping[str, str]
) -> Iterator[FieldError]:
    """Every combination in ``pipeline`` that Spark cannot run (with the job's ``sparkConf``)."""
    yield from _trigger_errors(pipeline)
    yield from _real_time_interval_errors(pipeline, spark_conf)
    yield from _static_input_errors(pipeline)
    yield from low_latency_errors(pipeline)
    if pipeline.streaming.for_each_batch_mode:
        yield from _for_each_batch_errors(pipeline, guarantee)


def _trigger_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    mode = pipeline.streaming.trigger_mode
    if mode not in TRIGGER_SUPPORT:
        return
    inputs, outputs = TRIGGER_SUPPORT[mode]
    mode_path = "spec.pipeline.streaming.triggerMode"
    if pipeline.streaming.for_each_batch_mode:
        yield FieldError(
            "spec.pipeline.streaming.forEachBatchMode",
            f"{mode} queries cannot write with foreachBatch; turn forEachBatchMode off "
            "or use a ProcessingTime trigger",
        )
    for index, item in enumerate(pipeline.inputs):
        path = f"spec.pipeline.inputs[{index}]"
        if item.is_stream and item.format not in inputs:
            yield FieldError(
                f"{path}.format",
                f"a {mode} trigger cannot read {item.format!s} inputs; it reads "
                f"{_listed(inputs)} (or use a ProcessingTime trigger at {mode_path})",
            )
        if item.watermark is not None:
            yield FieldError(
                f"{path}.watermark",
                f"{mode} queries are stateless: they have no watermarks or aggregations",
            )
        if item.bad_records is not None:
            yield FieldError(
                f"{path}.badRecords",
                f"{mode} queries cannot count and route bad records; use a ProcessingTime trigger",
            )
    for index, output in enumerate(pipeline.outputs):
        if mode is TriggerMode.REAL_TIME and output.output_mode is not OutputMode.UPDATE:
            yield FieldError(
                f"spec.pipeline.outputs[{index}].outputMode",
                "a RealTime query writes in update mode (Spark's real-time mode has no append "
                "mode yet); set outputMode: update",
            )
        if output.format not in outputs:
            yield FieldError(
                f"spec.pipeline.outputs[{index}].format",
                f"a {mode} trigger cannot write {output.format!s} outputs; it writes "
                f"{_listed(outputs)} (or use a ProcessingTime trigger at {mode_path})",
            )


def _real_time_interval_errors(
    pipeline: Pipeline, spark_conf: Mapping[str, str]
) -> Iterator[FieldError]:
    streaming = pipeline.streaming
    if streaming.trigger_mode is not TriggerMode.REAL_TIME or streaming.trigger_duration is None:
        return
    if REAL_TIME_MIN_BATCH_SETTING in spark_conf:
        return
    if interval_millis(streaming.trigger_duration) < REAL_TIME_MIN_BATCH_MILLIS:
        yield FieldError(
            "spec.pipeline.streaming.triggerDuration",
            f"a RealTime trigger runs batches of at least {REAL_TIME_MIN_BATCH_MILLIS // 1000} "
            f"seconds (Spark's {REAL_TIME_MIN_BATCH_SETTING}); give a longer duration or set "
            "that setting in spec.configuration.sparkConf",
        )


def _static_input_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    for index, item in enumerate(pipeline.inputs):
        if item.format is InputFormat.RATE and not item.is_stream:
            yield FieldError(
                f"spec.pipeline.inputs[{index}].isStream",
                "the rate source only streams; set isStream: true",
            )
    if not pipeline.batch_mode and not any(item.is_stream for item in pipeline.inputs):
        yield FieldError(
            "spec.pipeline.inputs",
            "a streaming pipeline needs at least one input with isStream: true "
            "(or batchMode: true for a batch job)",
        )


def _for_each_batch_errors(pipeline: Pipeline, guarantee: Guarantee) -> Iterator[FieldError]:
    streams = [item.name for item in pipeline.inputs if item.is_stream]
    if len(streams) > 1:
        yield FieldError(
            "spec.pipeline.streaming.forEachBatchMode",
            "forEachBatchMode runs the steps on each micro-batch of one streaming input; "
            f"this pipeline streams {len(streams)} ({', '.join(streams)}): make all but one "
            "isStream: false, or turn forEachBatchMode off",
        )
    if guarantee is not Guarantee.EXACTLY_ONCE:
        return
    for index, item in enumerate(pipeline.outputs):
        if item.format in FILE_OUTPUTS:
            yield FieldError(
                f"spec.pipeline.outputs[{index}].format",
                f"'{item.format!s}' written in forEachBatchMode is at-least-once (a replayed "
                "batch writes its files again); use delta or iceberg, or turn forEachBatchMode "
                "off so Spark's file sink log makes it exactly-once",
            )


def _listed(formats: frozenset[InputFormat] | frozenset[OutputFormat]) -> str:
    return ", ".join(sorted(str(item) for item in formats))
