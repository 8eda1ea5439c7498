"""What ``spec.pipeline.streaming.lowLatency: true`` changes, and why each change is safe.

A micro-batch query, by Spark's default, writes its offset log before each batch and its commit
log after it, each a small file written, checksummed and renamed on the critical path: measured
on this project's 2-core machine (a stateless Kafka -> Kafka pipeline, 1,000 records/s, real
broker), the two took 35-45% of every batch's time. Asynchronous progress tracking writes them
beside the next batch instead (both fell under 10 ms a batch; batches ran 35-45% shorter). End
to end (bench figure 6) that lowered p99 by 9-25% in 5 of 7 paired runs at 1,000 records/s, and
raised it in 6 of 7 at 10,000/s, where the writes are a smaller share of a larger batch and the
asynchronous writer takes CPU from it (docs/manifest.md says so). That is what low latency turns
on, where Spark supports it: a Kafka output of a stateless query under a ProcessingTime
trigger. It still writes every batch's logs (``ASYNC_PROGRESS_TUNINGS`` says why), so the
checkpoint stays one a query without it can restart from. Bench figure 6 shows the row. An
option the output (or its connection) sets itself wins.

Measured and left out, with why:

- ``spark.sql.streaming.pollingDelay`` (10 ms: how long a query that finds no new data waits
  before it looks again): no difference that showed above the noise, and 0 would make every idle
  query ask the broker for offsets in a tight loop.
- ``kafka.fetch.max.wait.ms`` (inputs): no consistent difference in any mode. The consumer's
  fetch returns as soon as one byte is there (``fetch.min.bytes`` 1), and a micro-batch reads
  offset ranges it knows exist.
- ``spark.sql.streaming.noDataMicroBatches.enabled: false``: a stateless query never runs a
  no-data batch, so it changes nothing there; in a stateful one it holds back the rows a
  watermark would emit until more data comes, which raises latency.
- ``kafka.linger.ms: 0`` (outputs): the Kafka client Spark ships (3.9) defaults to 0 already.

So ``lowLatency`` changes nothing but for Kafka outputs under a ProcessingTime trigger, and
``low_latency_errors`` refuses it everywhere else (no Kafka output, forEachBatchMode, the
Continuous and RealTime triggers that are Spark's low-latency modes already, and Once,
AvailableNow and batchMode, which have no latency to lower), as every field that would change
nothing is refused, so that nobody believes it does something. Whether a query keeps state
shows only in its plan: there the runner leaves Spark's tracking as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import Output, OutputFormat, Pipeline, Streaming, TriggerMode

LOW_LATENCY_PATH = "spec.pipeline.streaming.lowLatency"
ASYNC_PROGRESS_OPTION = "asyncProgressTrackingEnabled"
ASYNC_PROGRESS_INTERVAL_OPTION = "asyncProgressTrackingCheckpointIntervalMs"
STATEFUL_PLAN_NODES = frozenset(
    {
        "Aggregate",
        "Deduplicate",
        "DeduplicateWithinWatermark",
        "Join",
        "GlobalLimit",
        "LocalLimit",
        "FlatMapGroupsWithState",
        "FlatMapGroupsInPandasWithState",
        "TransformWithState",
        "TransformWithStateInPandas",
        "TransformWithStateInPySpark",
    }
)
"""Logical plan nodes that may make a streaming query keep state (a join is counted although a
stream-static one keeps none: telling them apart is not worth the risk). Spark refuses async
progress tracking for a stateful query only once it runs, so the runner checks the plan first."""


@dataclass(frozen=True)
class Tuning:
    """One setting or option low latency sets, with the value and why."""

    key: str
    value: str
    why: str


ASYNC_PROGRESS_TUNINGS = (
    Tuning(
        ASYNC_PROGRESS_OPTION,
        "true",
        "the offset log and commit log of each micro-batch are written beside the next batch "
        "instead of before and after it; Spark supports it for Kafka sinks of stateless "
        "ProcessingTime queries, which are at-least-once anyway (a restart may replay the "
        "batches whose logs were still being written)",
    ),
    Tuning(
        ASYNC_PROGRESS_INTERVAL_OPTION,
        "0",
        "every batch's logs are still written, only off the critical path: with Spark's default "
        "(one second) the offset log skips batches, and a checkpoint so written cannot be "
        "restarted without async tracking (Spark needs the batch before the last), so turning "
        "lowLatency off, or a query coming to keep state, would fail its next start",
    ),
)
"""Writer options of a Kafka output, for a stateless ProcessingTime query."""


def may_track_progress_async(streaming: Streaming, output: Output) -> bool:
    """Whether the manifest lets ``output``'s own streaming query track progress asynchronously:
    low latency, a ProcessingTime trigger and a Kafka output. (A Kafka output is never
    EXACTLY_ONCE: ``manifest_rules`` refuses that, so the replay async tracking may add after a
    crash stays within the at-least-once the job declared.) The runner still checks that the
    query's plan keeps no state (``keeps_state``): Spark refuses a stateful one only once it
    runs."""
    return (
        streaming.low_latency
        and streaming.trigger_mode is TriggerMode.PROCESSING_TIME
        and output.format is OutputFormat.KAFKA
    )


def async_progress_options(options: Mapping[str, str]) -> dict[str, str]:
    """The writer options of an output whose query may track progress asynchronously: its own
    ``options`` with the async progress ones added where it does not set them itself."""
    added = {t.key: t.value for t in ASYNC_PROGRESS_TUNINGS if t.key not in options}
    return {**options, **added}


def keeps_state(plan_nodes: Iterable[str]) -> bool:
    """Whether a query whose logical plan has these node names may keep state."""
    return any(name in STATEFUL_PLAN_NODES for name in plan_nodes)


def low_latency_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    """``lowLatency`` where there is no latency to lower: refused, as every field that would
    change nothing is, so that nobody believes it does something."""
    if not pipeline.streaming.low_latency:
        return
    if pipeline.batch_mode:
        yield FieldError(
            LOW_LATENCY_PATH,
            "a batch job (batchMode) reads its inputs once and ends: there is no latency to "
            "lower; remove lowLatency",
        )
        return
    mode = pipeline.streaming.trigger_mode
    if mode in (TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW):
        yield FieldError(
            LOW_LATENCY_PATH,
            f"a {mode} trigger reads what is there and ends: there is no latency to lower; "
            "remove lowLatency, or use a ProcessingTime trigger",
        )
    elif mode in (TriggerMode.CONTINUOUS, TriggerMode.REAL_TIME):
        yield FieldError(
            LOW_LATENCY_PATH,
            f"a {mode} trigger is Spark's low-latency mode already, and nothing lowLatency "
            "changes applies to it; remove lowLatency",
        )
    elif pipeline.streaming.for_each_batch_mode:
        yield FieldError(
            LOW_LATENCY_PATH,
            "forEachBatchMode writes with batch writers, whose queries Spark cannot let track "
            "progress asynchronously (what lowLatency changes); turn one of the two off",
        )
    elif not any(output.format is OutputFormat.KAFKA for output in pipeline.outputs):
        yield FieldError(
            LOW_LATENCY_PATH,
            "lowLatency lets the queries of Kafka outputs track progress asynchronously, and "
            "this pipeline has none; remove lowLatency",
        )
