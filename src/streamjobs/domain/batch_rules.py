"""Rules of batch writes: a ``batchMode`` pipeline, and each output's ``saveMode``.

A ``batchMode: true`` pipeline reads every input once (``spark.read``, whatever its ``isStream``
says), runs its steps, writes every output once (``df.write`` with the output's ``saveMode``)
and completes. What only a stream has is refused there rather than silently dropped: triggers,
``forEachBatchMode``, a checkpoint, watermarks, the rate source, per-trigger read limits, output
modes other than append, Kafka's ``startingOffsets: latest`` (a batch read of Kafka ends at the
latest offsets, so it would read nothing), and EXACTLY_ONCE (with no checkpoint, a rerun reads
and writes everything again).

``saveMode`` (append, overwrite, errorifexists, ignore) is what a batch write does with data
already there; a streaming query always appends, so it takes effect only in ``batchMode``, in
``forEachBatchMode`` and for jdbc outputs, the three places streamjobs writes with batch writers.
"""

from __future__ import annotations

from collections.abc import Iterator

from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import (
    Guarantee,
    Input,
    InputFormat,
    Output,
    OutputFormat,
    OutputMode,
    Pipeline,
    TriggerMode,
)

SAVE_MODE_OPTION = "saveMode"
SAVE_MODES = ("append", "overwrite", "errorifexists", "ignore")
KEY_COLUMNS_OPTION = "keyColumns"
_SAVE_MODES_OF_FORMAT = {
    OutputFormat.KAFKA: ("append", "errorifexists"),
    OutputFormat.CONSOLE: ("append",),
}
"""Sinks that take only some save modes (Spark's Kafka writer refuses overwrite and ignore)."""
PER_TRIGGER_OPTIONS = (
    "maxFilesPerTrigger",
    "maxBytesPerTrigger",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
)
"""Reader options that limit a stream's micro-batches; a batch read takes everything at once."""
KAFKA_INPUTS = frozenset({InputFormat.KAFKA, InputFormat.KAFKA_JSON})
_NOT_IN_BATCH = "batchMode reads every input once and writes every output once"


def batch_mode_errors(pipeline: Pipeline, guarantee: Guarantee | None) -> Iterator[FieldError]:
    """What ``pipeline`` sets that only a stream has, when it is a batch job."""
    if not pipeline.batch_mode:
        return
    streaming = pipeline.streaming
    path = "spec.pipeline.streaming"
    if streaming.trigger_mode is not TriggerMode.PROCESSING_TIME:
        yield FieldError(
            f"{path}.triggerMode",
            f"{_NOT_IN_BATCH}, with no trigger; remove triggerMode (or turn batchMode off)",
        )
    if streaming.trigger_duration is not None:
        yield FieldError(
            f"{path}.triggerDuration", f"{_NOT_IN_BATCH}, with no trigger; remove triggerDuration"
        )
    if streaming.for_each_batch_mode:
        yield FieldError(
            f"{path}.forEachBatchMode",
            f"{_NOT_IN_BATCH}, with batch writers already; turn forEachBatchMode off",
        )
    if streaming.checkpoint_location is not None:
        yield FieldError(
            f"{path}.checkpointLocation",
            "a batch job keeps no checkpoint: each run reads its inputs whole; remove it",
        )
    if guarantee is Guarantee.EXACTLY_ONCE:
        yield FieldError(
            "spec.processing.guarantee",
            "a batch job has no checkpoint, so a rerun reads and writes everything again: it "
            "cannot give EXACTLY_ONCE; use AT_LEAST_ONCE (with saveMode: overwrite a rerun "
            "replaces what the last one wrote)",
        )
    for index, item in enumerate(pipeline.inputs):
        yield from _batch_input_errors(item, f"spec.pipeline.inputs[{index}]")
    for index, output in enumerate(pipeline.outputs):
        if output.output_mode is not OutputMode.APPEND:
            yield FieldError(
                f"spec.pipeline.outputs[{index}].outputMode",
                f"outputMode is for streaming queries; {_NOT_IN_BATCH} (its whole result): "
                "remove it, and set options.saveMode to say what happens to data already there",
            )


def _batch_input_errors(item: Input, path: str) -> Iterator[FieldError]:
    if item.format is InputFormat.RATE:
        yield FieldError(
            f"{path}.format", "the rate source only streams; a batch job cannot read it"
        )
    if item.watermark is not None:
        yield FieldError(
            f"{path}.watermark", f"a watermark bounds a stream's state; {_NOT_IN_BATCH}"
        )
    for key in PER_TRIGGER_OPTIONS:
        if key in item.options:
            yield FieldError(
                f"{path}.options.{key}",
                f"{key} limits each micro-batch of a stream; {_NOT_IN_BATCH}: remove it",
            )
    starting = item.options.get("startingOffsets")
    if item.format in KAFKA_INPUTS and isinstance(starting, str) and starting.lower() == "latest":
        yield FieldError(
            f"{path}.options.startingOffsets",
            "a batch read of Kafka runs from startingOffsets to endingOffsets (the latest, by "
            "default), so 'latest' would read nothing; use earliest (the default) or offsets "
            "per partition",
        )


def save_mode_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    """Each output's ``saveMode``: a known mode, one its sink takes, where a batch writes."""
    for index, output in enumerate(pipeline.outputs):
        if SAVE_MODE_OPTION in output.options:
            yield from _save_mode_errors(pipeline, output, f"spec.pipeline.outputs[{index}]")


def _save_mode_errors(pipeline: Pipeline, output: Output, path: str) -> Iterator[FieldError]:
    where = f"{path}.options.{SAVE_MODE_OPTION}"
    value = output.options[SAVE_MODE_OPTION]
    if not isinstance(value, str) or value.lower() not in SAVE_MODES:
        yield FieldError(where, f"{value!r} is not a save mode: use one of {', '.join(SAVE_MODES)}")
        return
    mode = value.lower()
    if mode == "append":
        return
    if output.format is OutputFormat.JDBC and KEY_COLUMNS_OPTION in output.options:
        yield FieldError(
            where, f"a jdbc output with {KEY_COLUMNS_OPTION} upserts by key; it takes no saveMode"
        )
        return
    allowed = _SAVE_MODES_OF_FORMAT.get(output.format, SAVE_MODES)
    if mode not in allowed:
        yield FieldError(
            where,
            f"a {output.format!s} output cannot {mode}: its saveMode is {' or '.join(allowed)}",
        )
    elif not writes_in_batches(pipeline, output):
        yield FieldError(
            where,
            "a streaming query appends what each trigger gives (outputMode decides which rows); "
            "saveMode takes effect with batchMode, forEachBatchMode or a jdbc output: remove it",
        )


def writes_in_batches(pipeline: Pipeline, output: Output) -> bool:
    """Whether ``output`` is written by a batch writer, which honours its saveMode."""
    streaming = pipeline.streaming
    return (
        pipeline.batch_mode or streaming.for_each_batch_mode or output.format is OutputFormat.JDBC
    )
