"""A warm standby's runner: Spark started and warmed up, then held ready until it is promoted.

The supervisor keeps a second driver of a pipeline waiting so that, when the running one dies,
the application goes on without paying for a JVM, a Spark session and a cold first micro-batch.
Until promoted, the standby must leave the job's data alone: the warm-up resolves the streaming
inputs (their connectors loaded) and runs throwaway queries of its own (scheduler, code
generation, the streaming engine and the outputs' file or Delta writers warm) in a scratch
directory; it reads no input, writes no output and never touches the job's checkpoint. Then it
says it is ready (``--standby-ready-file``) and waits for the server's promotion
(``--standby-promote-file``, ``{"startAt": …}``) or a stop.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO

from pyspark.sql import SparkSession

from streamjobs.domain.clock import Clock
from streamjobs.domain.datasets import DatasetResolver
from streamjobs.domain.manifest import Output, OutputFormat, StreamingJob
from streamjobs.runner.query_control import error_text
from streamjobs.runner.sources import read_input

PROMOTION_POLL_SECONDS = 0.05
"""How often a held standby looks for its promotion: it adds to every failover."""
WARM_UP_BATCHES = 2
"""Micro-batches of the throwaway query: the first one is the cold one, the next is cheap."""
WARM_UP_TIMEOUT_SECONDS = 60.0
SCRATCH_SINKS = frozenset(
    {OutputFormat.PARQUET, OutputFormat.JSON, OutputFormat.CSV, OutputFormat.DELTA}
)
"""Output formats a throwaway query can write with to a scratch directory of its own."""
NOOP_SINK = "noop"


def warm_up(
    spark: SparkSession,
    job: StreamingJob,
    resolver: DatasetResolver,
    *,
    stopped: Callable[[], bool],
    errors: IO[str],
) -> None:
    """Make the standby's first real micro-batch cheap without reading or writing the job's data.

    Nothing here fails the standby: an input that cannot be resolved now is reported by the
    run once promoted, as any run would."""
    pipeline = job.spec.pipeline
    assert pipeline is not None
    for index, item in enumerate(pipeline.inputs):
        if not item.is_stream:
            continue  # a static input would be read (its files listed, its table's log read)
        try:
            location = resolver.source(item, path=f"spec.pipeline.inputs[{index}]")
            read_input(spark, item, location)
        except Exception as error:
            errors.write(f"warning: standby warm-up: input {item.name!r}: {error_text(error)}\n")
    for sink_format in _throwaway_sinks(pipeline.outputs):
        try:
            _run_throwaway_query(spark, sink_format, stopped=stopped)
        except Exception as error:
            errors.write(f"warning: standby warm-up ({sink_format}): {error_text(error)}\n")


def _throwaway_sinks(outputs: Sequence[Output]) -> list[str]:
    """The sinks the throwaway queries write to: each format of the outputs that can write to a
    scratch directory (whose writer is the costly part of a cold first micro-batch), else
    Spark's no-op sink."""
    formats = [output.format.value for output in outputs if output.format in SCRATCH_SINKS]
    return list(dict.fromkeys(formats)) or [NOOP_SINK]


def _run_throwaway_query(
    spark: SparkSession, sink_format: str, *, stopped: Callable[[], bool]
) -> None:
    """A rate -> ``sink_format`` query in a scratch directory, for ``WARM_UP_BATCHES``
    micro-batches."""
    scratch = Path(tempfile.mkdtemp(prefix="streamjobs-standby-warm-up-"))
    try:
        writer = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", 10)
            .load()
            .selectExpr("value % 7 AS key", "value", "timestamp")
            .writeStream.format(sink_format)
            .queryName(f"streamjobs-standby-warm-up-{sink_format}")
            .option("checkpointLocation", str(scratch / "checkpoint"))
            .trigger(processingTime="100 milliseconds")
        )
        query = writer.start() if sink_format == NOOP_SINK else writer.start(str(scratch / "out"))
        try:
            deadline = time.monotonic() + WARM_UP_TIMEOUT_SECONDS
            while query.isActive and not stopped() and time.monotonic() < deadline:
                progress = query.lastProgress
                if progress is not None and progress["batchId"] >= WARM_UP_BATCHES - 1:
                    break
                time.sleep(0.1)
        finally:
            query.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def say_ready(path: Path, clock: Clock) -> None:
    """Write the ready file whole (under a temporary name, then renamed)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"readyAt": clock.now().isoformat()}), encoding="utf-8")
    os.replace(temporary, path)


def await_promotion(
    path: Path,
    *,
    stopped: Callable[[], bool],
    clock: Clock,
    errors: IO[str],
    poll_seconds: float = PROMOTION_POLL_SECONDS,
) -> datetime | None:
    """The time the promotion in ``path`` says to start at, once it is there; None when a stop
    is asked first. It sleeps rather than waiting on the stop event, as ``PipelineRun.hold``."""
    while not stopped():
        if path.exists():
            return _start_at(path, clock, errors)
        time.sleep(poll_seconds)
    return None


def _start_at(path: Path, clock: Clock, errors: IO[str]) -> datetime:
    """The promotion's ``startAt``; now when it cannot be read (the server wants this driver to
    go on: better at once than never)."""
    try:
        text = path.read_text(encoding="utf-8")
        start_at = datetime.fromisoformat(json.loads(text)["startAt"])
        if start_at.tzinfo is None:
            raise ValueError("startAt has no UTC offset")
        return start_at
    except (OSError, ValueError, KeyError, TypeError) as error:
        errors.write(f"warning: the promotion in {path} is unreadable ({error}); starting now\n")
        return clock.now()
