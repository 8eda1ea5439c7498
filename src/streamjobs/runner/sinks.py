"""Writes a pipeline's outputs: as streaming queries, micro-batch by micro-batch, or once.

Streaming sinks (files, Delta, Iceberg, Kafka, console) start one query per output, each with its
own checkpoint, so Spark's sink commit protocols give their guarantees. Batch writers serve
``forEachBatchMode`` and the sinks that have no streaming writer (JDBC); the Delta and Iceberg
batch writers tag each write with the micro-batch id so a replayed batch is not written twice.
A ``batchMode`` job writes each output once, by its ``saveMode``, with no such tags: its next
run is a new write, not a replay.

A Kafka output of a low-latency job (``spec.pipeline.streaming.lowLatency``) tracks its progress
asynchronously when its query keeps no state (``domain.low_latency``); its own options win.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from py4j.java_gateway import JavaObject
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, DataFrameWriter
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from streamjobs.domain.datasets import SparkSink
from streamjobs.domain.low_latency import (
    async_progress_options,
    keeps_state,
    may_track_progress_async,
)
from streamjobs.domain.manifest import Output, OutputFormat, Streaming
from streamjobs.runner import jdbc
from streamjobs.runner.file_writes import write_files
from streamjobs.runner.triggers import with_trigger

BATCH_ONLY = frozenset({OutputFormat.JDBC})
FILE_OUTPUTS = frozenset({OutputFormat.PARQUET, OutputFormat.JSON, OutputFormat.CSV})
ICEBERG_BATCH_PROPERTY = "streamjobs.batch"

BatchWriter = Callable[[DataFrame, int], None]


@dataclass(frozen=True)
class QuerySettings:
    """How an output's streaming query runs."""

    name: str
    streaming: Streaming
    checkpoint: str | None


def start_query(
    frame: DataFrame, output: Output, sink: SparkSink, settings: QuerySettings, *, writer_id: str
) -> StreamingQuery:
    """Start the streaming query that writes ``frame`` to the output."""
    if output.format in BATCH_ONLY:
        batch_writer = batch_writer_for(output, sink, writer_id=writer_id)
        writer = frame.writeStream.foreachBatch(batch_writer)
    else:
        frame = prepared(frame, output)
        options = sink.options
        if may_track_progress_async(settings.streaming, output) and not keeps_state(
            plan_node_names(frame)
        ):
            options = async_progress_options(options)
        writer = _streaming_writer(frame, sink, options)
    writer = writer.queryName(settings.name).outputMode(output.output_mode.value)
    if settings.checkpoint:
        writer = writer.option("checkpointLocation", settings.checkpoint)
    writer = with_trigger(writer, settings.streaming)
    if output.format not in BATCH_ONLY and sink.table:
        return writer.toTable(sink.table)
    if output.format not in BATCH_ONLY and sink.path:
        return writer.start(sink.path)
    return writer.start()


def _streaming_writer(
    frame: DataFrame, sink: SparkSink, options: dict[str, str]
) -> DataStreamWriter:
    writer = frame.writeStream.format(sink.format).options(**options)
    return writer.partitionBy(*sink.partition_by) if sink.partition_by else writer


def plan_node_names(frame: DataFrame) -> set[str]:
    """The names of the nodes of ``frame``'s analyzed logical plan (``Aggregate``, ...)."""
    names: set[str] = set()
    pending: list[JavaObject] = [frame._jdf.queryExecution().analyzed()]
    while pending:
        node = pending.pop()
        names.add(node.nodeName())
        children = node.children()
        pending.extend(children.apply(index) for index in range(children.size()))
    return names


def batch_writer_for(output: Output, sink: SparkSink, *, writer_id: str) -> BatchWriter:
    """A function that writes one micro-batch to the output; ``writer_id`` names this writer
    across restarts (Delta's ``txnAppId``)."""

    def write(batch: DataFrame, batch_id: int) -> None:
        write_batch(prepared(batch, output), output, sink, batch_id=batch_id, writer_id=writer_id)

    return write


def write_batch(
    batch: DataFrame, output: Output, sink: SparkSink, *, batch_id: int, writer_id: str
) -> None:
    """Write one micro-batch (or a batch job's result) to the output."""
    if output.format is OutputFormat.JDBC:
        (jdbc.upsert if sink.key_columns else jdbc.append)(batch, sink)
    elif output.format is OutputFormat.DELTA:
        writer = batch.write.format("delta").mode(sink.save_mode).options(**sink.options)
        writer = writer.option("txnAppId", writer_id).option("txnVersion", batch_id)
        _save(writer.partitionBy(*sink.partition_by), sink)
    elif output.format is OutputFormat.ICEBERG:
        _write_iceberg_batch(batch, sink, marker=f"{writer_id}:{batch_id}")
    elif output.format is OutputFormat.CONSOLE:
        batch.show(int(sink.options.get("numRows", "20")), truncate=False)
    elif output.format in FILE_OUTPUTS and sink.path:
        write_files(batch, sink)
    else:
        writer = batch.write.format(sink.format).mode(sink.save_mode).options(**sink.options)
        _save(writer.partitionBy(*sink.partition_by), sink)


def write_once(frame: DataFrame, output: Output, sink: SparkSink) -> None:
    """Write a batch job's result to the output, doing with data already there what its
    ``saveMode`` says (an Iceberg table is created by the first write)."""
    frame = prepared(frame, output)
    if output.format in (OutputFormat.DELTA, OutputFormat.ICEBERG):
        writer = frame.write.format(sink.format).mode(sink.save_mode).options(**sink.options)
        _save(writer.partitionBy(*sink.partition_by), sink)
    else:
        write_batch(frame, output, sink, batch_id=0, writer_id="")


def _save(writer: DataFrameWriter, sink: SparkSink) -> None:
    if sink.table:
        writer.saveAsTable(sink.table)
    else:
        writer.save(sink.path)


def _write_iceberg_batch(batch: DataFrame, sink: SparkSink, *, marker: str) -> None:
    """Append to an Iceberg table unless a snapshot already carries this batch's marker."""
    assert sink.table is not None
    spark = batch.sparkSession
    writer = batch.writeTo(sink.table).option(f"snapshot-property.{ICEBERG_BATCH_PROPERTY}", marker)
    try:
        written = spark.sql(
            f"SELECT 1 FROM {sink.table}.snapshots "
            f"WHERE summary['{ICEBERG_BATCH_PROPERTY}'] = '{marker}' LIMIT 1"
        )
    except AnalysisException:
        writer.using("iceberg").create()
        return
    if written.isEmpty():
        writer.append()


def prepared(frame: DataFrame, output: Output) -> DataFrame:
    """The frame in the shape its sink needs: Kafka takes ``value`` (and ``key``) columns."""
    if output.format is not OutputFormat.KAFKA:
        return frame
    columns = set(frame.columns)
    value = F.col("value") if "value" in columns else F.to_json(F.struct(*frame.columns))
    selected = [value.cast("string").alias("value")]
    if "key" in columns:
        selected.insert(0, F.col("key").cast("string").alias("key"))
    return frame.select(*selected)
