"""Which changes to a pipeline keep its checkpoint usable: the static rules an upgrade checks first.

Spark's guide ("Recovery Semantics after Changes in a Streaming Query") says what a query started
again from the same checkpoint may change: not the number or kind of its streaming sources, nor
what they read (a Kafka topic, a file path), though rate limits may change; not its sink's kind,
except file -> kafka and kafka <-> foreach-like sinks; not a file sink's directory, though a Kafka
topic may change; and nothing of its stateful operators. The rules here compare the spec the
running application has with the new one, as far as the manifest shows: query by query (each
output's query has its own checkpoint, ``<checkpoint>/<output key>``, or one ``foreachBatch``
query writes them all), with the streaming inputs each query reads through the steps' SQL. What
the manifest cannot show (a step's SQL changing a stateful operator or its state's schema) the
dry run finds (``domain.dry_runs``).

Each refusal names the field, the rule and what the user can do instead; changes Spark allows
but that are worth knowing come back as warnings (``domain.compatibility_warnings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamjobs.domain.compatibility_findings import Incompatibility as Incompatibility
from streamjobs.domain.compatibility_findings import StaticReview as StaticReview
from streamjobs.domain.compatibility_warnings import (
    batch_output_warnings,
    processing_warnings,
    trigger_warnings,
)
from streamjobs.domain.locations import LocationError, normalized_uri
from streamjobs.domain.manifest import (
    Guarantee,
    Input,
    InputFormat,
    Output,
    OutputFormat,
    Pipeline,
    StreamingJob,
)
from streamjobs.domain.pipeline_queries import output_keys, streaming_inputs_read

ADVICE = (
    "upgrade with --mode stateless (the new spec on a fresh checkpoint, its inputs read from "
    "their startingOffsets), or make it a new job"
)
KAFKA_FORMATS = frozenset({InputFormat.KAFKA, InputFormat.KAFKA_JSON})
"""Both read with Spark's kafka source; kafkajson only parses what it reads."""
READ_OPTIONS = frozenset(
    {"subscribe", "subscribePattern", "assign", "readChangeFeed"}
    | {"path", "pathGlobFilter", "recursiveFileLookup"}
)
"""Input options that change what a source reads, which its checkpoint's offsets describe."""
STARTING_OPTIONS = frozenset(
    {"startingOffsets", "startingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy"}
    | {"startingTimestamp", "startingVersion"}
)
"""Input options Spark reads only when a query starts without a checkpoint."""
FILE_OUTPUTS = frozenset({OutputFormat.PARQUET, OutputFormat.JSON, OutputFormat.CSV})
FOREACH_LIKE_OUTPUTS = frozenset({OutputFormat.JDBC})
"""Outputs the runner writes with ``foreachBatch`` even outside forEachBatchMode."""
ALLOWED_SINK_CHANGES = frozenset(
    {(file_format, OutputFormat.KAFKA) for file_format in FILE_OUTPUTS}
    | {(OutputFormat.KAFKA, other) for other in FOREACH_LIKE_OUTPUTS}
    | {(other, OutputFormat.KAFKA) for other in FOREACH_LIKE_OUTPUTS}
)
"""Sink changes Spark's guide allows on one checkpoint: file -> kafka, kafka <-> foreach."""


def static_changes(old: StreamingJob, new: StreamingJob) -> list[Incompatibility]:
    """The changes from ``old`` (the running application's spec) to ``new`` that Spark does not
    allow on one checkpoint; empty when the static rules find none."""
    return review(old, new).refusals


def static_warnings(old: StreamingJob, new: StreamingJob) -> list[str]:
    """The changes from ``old`` to ``new`` that are allowed but worth knowing, each as
    ``path: message``."""
    return review(old, new).warnings


def review(old: StreamingJob, new: StreamingJob) -> StaticReview:
    """Both: refusals and warnings (``old`` and ``new`` resolved: checkpoint locations filled)."""
    found = StaticReview()
    old_type, new_type = old.spec.application.type, new.spec.application.type
    if old_type is not new_type:
        found.refuse(
            "spec.application.type",
            "application-type",
            f"the application changed from a {old_type} to a {new_type} application: the new "
            f"one cannot continue from the old one's checkpoint; {ADVICE}",
        )
        return found
    if old.spec.pipeline is None or new.spec.pipeline is None:
        found.warn(
            "spec.application",
            f"a {new_type} program keeps its own checkpoint, which streamjobs does not know: "
            "there are no rules to compare and no dry run; whether the new version continues "
            "from the old one's state is up to the program",
        )
        return found
    if _checkpoint_rules(old, new, found):
        _query_rules(old.spec.pipeline, new.spec.pipeline, found)
        processing_warnings(old, new, found)
    return found


def _checkpoint_rules(old: StreamingJob, new: StreamingJob, found: StaticReview) -> bool:
    """Whether both specs keep one checkpoint the new one would continue from (refusals said
    why not otherwise)."""
    old_pipeline, new_pipeline = old.spec.pipeline, new.spec.pipeline
    assert old_pipeline is not None
    assert new_pipeline is not None
    if old_pipeline.batch_mode or new_pipeline.batch_mode:
        if old_pipeline.batch_mode != new_pipeline.batch_mode:
            found.refuse(
                "spec.pipeline.batchMode",
                "batch-mode",
                f"changed from {_flag(old_pipeline.batch_mode)} to "
                f"{_flag(new_pipeline.batch_mode)}: a batch job keeps no checkpoint, so there "
                f"is nothing to carry over; {ADVICE}",
            )
        else:
            found.warn(
                "spec.pipeline.batchMode",
                "a batch job keeps no checkpoint: the new spec reads its inputs afresh",
            )
        return False
    if old.spec.processing.guarantee is Guarantee.NONE:
        found.refuse(
            "spec.processing.guarantee",
            "no-checkpoint",
            "the running application keeps no checkpoint (guarantee NONE): there is no state "
            "to carry over; upgrade with --mode stateless",
        )
        return False
    if new.spec.processing.guarantee is Guarantee.NONE:
        found.refuse(
            "spec.processing.guarantee",
            "no-checkpoint",
            "the new spec keeps no checkpoint (guarantee NONE), so it would not continue from "
            "the running application's; upgrade with --mode stateless, or keep a guarantee "
            "that checkpoints",
        )
        return False
    old_location = _location(old_pipeline.streaming.checkpoint_location)
    new_location = _location(new_pipeline.streaming.checkpoint_location)
    if old_location != new_location:
        found.refuse(
            "spec.pipeline.streaming.checkpointLocation",
            "checkpoint-location",
            f"changed from {old_location} to {new_location}: the new spec would start afresh "
            f"there instead of continuing from {old_location}; keep the location for a "
            "last-state upgrade, or upgrade with --mode stateless",
        )
        return False
    old_mode = old_pipeline.streaming.for_each_batch_mode
    new_mode = new_pipeline.streaming.for_each_batch_mode
    if old_mode != new_mode:
        found.refuse(
            "spec.pipeline.streaming.forEachBatchMode",
            "for-each-batch-mode",
            f"changed from {_flag(old_mode)} to {_flag(new_mode)}: with it on, one query "
            "writes every output; off, each output has a query and a checkpoint of its own, so "
            f"the new queries would not find the old ones' offsets and state; {ADVICE}",
        )
        return False
    return True


def _query_rules(old: Pipeline, new: Pipeline, found: StaticReview) -> None:
    """Each query the new spec shares with the old: its streaming inputs and its sink."""
    trigger_warnings(old, new, found)
    if new.streaming.for_each_batch_mode:
        old_stream = next(item for item in old.inputs if item.is_stream)
        index, new_stream = next((i, item) for i, item in enumerate(new.inputs) if item.is_stream)
        _input_rules(old_stream, new_stream, index, found)
        batch_output_warnings(old, new, found)
        return
    old_outputs = dict(zip(output_keys(old), old.outputs, strict=True))
    compared: set[str] = set()
    for index, (key, output) in enumerate(zip(output_keys(new), new.outputs, strict=True)):
        path = f"spec.pipeline.outputs[{index}]"
        previous = old_outputs.get(key)
        if previous is None:
            found.warn(path, _new_output_message(key, output, old.outputs))
            continue
        _sink_rules(key, previous, output, path, found)
        old_reads = streaming_inputs_read(old, previous.name)
        new_reads = streaming_inputs_read(new, output.name)
        for name in sorted(new_reads - old_reads):
            found.refuse(
                path,
                "input-added",
                f"output {key!r} now reads the streaming input {name!r}, which its query did "
                f"not read: Spark cannot add a source to a query that has a checkpoint; {ADVICE}",
            )
        for name in sorted(old_reads - new_reads):
            found.refuse(
                path,
                "input-removed",
                f"output {key!r} no longer reads the streaming input {name!r}: Spark cannot "
                f"drop a source from a query that has a checkpoint; {ADVICE}",
            )
        for name in sorted((old_reads & new_reads) - compared):
            compared.add(name)
            new_index, new_input = _input_named(new, name)
            _input_rules(_input_named(old, name)[1], new_input, new_index, found)
    for key in sorted(old_outputs.keys() - set(output_keys(new))):
        found.warn(
            "spec.pipeline.outputs",
            f"output {key!r} is gone: its query's checkpoint ({key}/) stays in the job's "
            "checkpoint, unused",
        )


def _input_rules(old: Input, new: Input, index: int, found: StaticReview) -> None:
    path = f"spec.pipeline.inputs[{index}]"
    if _source_kind(old) != _source_kind(new):
        found.refuse(
            f"{path}.format",
            "input-type",
            f"input {new.name!r} changed from {old.format} to {new.format}: a query cannot go "
            f"on from the offsets of another kind of source; {ADVICE}",
        )
        return
    if (old.dataset, _location(old.path)) != (new.dataset, _location(new.path)):
        field_name = "dataset" if new.dataset or old.dataset else "path"
        found.refuse(
            f"{path}.{field_name}",
            "input-location",
            f"input {new.name!r} now reads {_where(new)} instead of {_where(old)}: the "
            f"checkpoint's offsets are those of {_where(old)}; {ADVICE}",
        )
    for key in sorted(_changed_options(old.options, new.options)):
        was, now = _shown(old.options.get(key)), _shown(new.options.get(key))
        if key in READ_OPTIONS:
            found.refuse(
                f"{path}.options.{key}",
                "input-option",
                f"input {new.name!r}'s option {key} changed from {was} to {now}, which changes "
                f"what it reads: the checkpoint's offsets are those of what it read; {ADVICE}",
            )
        elif key in STARTING_OPTIONS:
            found.warn(
                f"{path}.options.{key}",
                f"changed from {was} to {now}, but Spark reads it only when a query starts "
                "without a checkpoint: the upgraded queries go on from the checkpoint's offsets",
            )
    if old.watermark != new.watermark:
        found.warn(
            f"{path}.watermark",
            f"changed from {_watermark(old)} to {_watermark(new)}: stateful operators keep "
            "their state, but which records count as late, and when windows are written, "
            "follow the new watermark from the upgrade on (the dry run checks that the state "
            "still fits the new plan)",
        )


def _sink_rules(key: str, old: Output, new: Output, path: str, found: StaticReview) -> None:
    if old.format != new.format:
        if (old.format, new.format) in ALLOWED_SINK_CHANGES:
            found.warn(
                f"{path}.format",
                f"output {key!r} changed from {old.format} to {new.format}: the new sink, "
                f"{_where(new)}, receives only the micro-batches after the upgrade",
            )
        else:
            found.refuse(
                f"{path}.format",
                "sink-type",
                f"output {key!r} changed from {old.format} to {new.format}: Spark allows few "
                "changes of a query's sink on one checkpoint (a file sink to kafka, kafka to or "
                f"from a foreach-like sink such as jdbc); {ADVICE}",
            )
        return
    if _sink_where(old) != _sink_where(new):
        if old.format in FILE_OUTPUTS and new.format == old.format:
            found.refuse(
                f"{path}.{'dataset' if new.dataset else 'path'}",
                "sink-location",
                f"output {key!r} now writes {_where(new)} instead of {_where(old)}: a file "
                "sink keeps the log of the batches it wrote in its directory (_spark_metadata), "
                f"so its query cannot move it; {ADVICE}",
            )
        else:
            found.warn(
                path,
                f"output {key!r} now writes {_where(new)} instead of {_where(old)}: the new "
                "place receives only the micro-batches after the upgrade",
            )
    if new.format in FILE_OUTPUTS and old.options.get("partitionBy") != new.options.get(
        "partitionBy"
    ):
        found.warn(
            f"{path}.options.partitionBy",
            f"output {key!r} is partitioned differently from now on: its directory will hold "
            "files of both layouts",
        )
    if old.output_mode != new.output_mode:
        found.warn(
            f"{path}.outputMode",
            f"output {key!r} changed from {old.output_mode} to {new.output_mode} mode: its "
            "query keeps its state, but what it writes of it changes from the upgrade on",
        )


def _new_output_message(key: str, output: Output, old_outputs: Sequence[Output]) -> str:
    message = (
        f"output {key!r} is new: its query has no checkpoint yet, so it reads its inputs from "
        "their startingOffsets"
    )
    if any(_sink_where(previous) == _sink_where(output) for previous in old_outputs):
        message += (
            f", and it writes to {_where(output)}, where an output of the running spec writes: "
            "if it is a renamed one, what it wrote may be written again"
        )
    return message


def _input_named(pipeline: Pipeline, name: str) -> tuple[int, Input]:
    return next(
        (index, item)
        for index, item in enumerate(pipeline.inputs)
        if item.name.casefold() == name and item.is_stream
    )


def _source_kind(item: Input) -> str:
    return "kafka" if item.format in KAFKA_FORMATS else str(item.format)


def _sink_where(output: Output) -> tuple[str | None, str | None, Any]:
    return output.dataset, _location(output.path), output.options.get("topic")


def _changed_options(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    return {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}


def _location(location: str | None) -> str | None:
    if location is None:
        return None
    try:
        return normalized_uri(location)
    except LocationError:
        return location


def _where(item: Input | Output) -> str:
    topic = item.options.get("topic") if isinstance(item, Output) else None
    place = item.dataset or _location(item.path) or "its source"
    return f"{place} (topic {topic})" if topic else place


def _watermark(item: Input) -> str:
    mark = item.watermark
    return "none" if mark is None else f"{mark.column} delayed by {mark.delay}"


def _shown(value: Any) -> str:
    return "nothing" if value is None else repr(value)


def _flag(value: bool) -> str:
    return "true" if value else "false"
