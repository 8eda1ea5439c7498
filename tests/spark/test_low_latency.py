"""spec.pipeline.streaming.lowLatency in the runner, against a real broker on local[2]: the
Kafka outputs whose queries track progress asynchronously (stateless ones only, and not when the
output says otherwise), and a low-latency Kafka -> Kafka pipeline delivering every record, before
and after low latency is turned off."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.domain.datasets import SparkSink
from streamjobs.domain.low_latency import ASYNC_PROGRESS_OPTION
from streamjobs.domain.manifest import Output, Streaming
from streamjobs.runner.sinks import QuerySettings, start_query
from tests.spark.conftest import PipelineRunner
from tests.spark.kafka_topics import consume_values, new_topic, produce_json
from tests.spark.pipelines import pipeline_job
from tests.spark.test_kafka_pipelines import kafka_connection, kafka_input, orders

pytestmark = [pytest.mark.spark, pytest.mark.kafka]
ASYNC_EXECUTION = "AsyncProgressTrackingMicroBatchExecution"


def kafka_job(topic_in: str, topic_out: str) -> dict[str, Any]:
    return pipeline_job(
        "quick",
        inputs=[kafka_input(topic_in)],
        steps=[[("paid", "SELECT id, amount FROM orders WHERE amount > 0")]],
        outputs=[{"name": "paid", "format": "kafka", "dataset": f"kafka-main:{topic_out}"}],
        trigger={"triggerMode": "ProcessingTime"},
        lowLatency=True,
    )


class Started(list[StreamingQuery]):
    """The queries a test started, and where their checkpoints go."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory


@pytest.fixture
def started(spark: SparkSession, kafka_broker: KafkaBroker, tmp_path: Path) -> Iterator[Started]:
    queries = Started(tmp_path)
    yield queries
    for query in queries:
        query.stop()


def start_kafka_query(
    frame: DataFrame,
    broker: KafkaBroker,
    started: Started,
    *,
    output_mode: str = "append",
    **options: str,
) -> str:
    """Start ``frame``'s query into a new topic as a low-latency job would; its execution's
    class name."""
    output = Output.model_validate({"name": "ticks", "format": "kafka", "outputMode": output_mode})
    sink = SparkSink(
        format="kafka",
        options={
            "kafka.bootstrap.servers": broker.bootstrap_servers,
            "topic": new_topic(broker, "quick"),
            **options,
        },
    )
    settings = QuerySettings(
        name=f"quick-{len(started)}",
        streaming=Streaming(low_latency=True),
        checkpoint=str(started.directory / f"checkpoint-{len(started)}"),
    )
    query = start_query(frame, output, sink, settings, writer_id="quick")
    started.append(query)
    execution: str = query._jsq.streamingQuery().getClass().getSimpleName()
    return execution


def test_a_stateless_kafka_output_tracks_progress_asynchronously(
    spark: SparkSession, kafka_broker: KafkaBroker, started: Started
) -> None:
    ticks = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
    evens = ticks.where("value % 2 = 0").selectExpr("CAST(value AS STRING) AS value")
    assert start_kafka_query(evens, kafka_broker, started) == ASYNC_EXECUTION


def test_stateful_queries_and_the_outputs_own_option_keep_spark_s_tracking(
    spark: SparkSession, kafka_broker: KafkaBroker, started: Started
) -> None:
    ticks = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
    counted = ticks.groupBy((ticks.value % 3).alias("key")).count()
    assert start_kafka_query(counted, kafka_broker, started, output_mode="update") != (
        ASYNC_EXECUTION
    )
    declined = start_kafka_query(ticks, kafka_broker, started, **{ASYNC_PROGRESS_OPTION: "false"})
    assert declined != ASYNC_EXECUTION


def test_a_low_latency_pipeline_delivers_every_record_and_may_turn_it_off(
    runner: PipelineRunner, kafka_broker: KafkaBroker
) -> None:
    """Its checkpoint logs every batch, so the job restarts from it without low latency (with
    Spark's default interval the offset log would skip batches, and that start would fail)."""
    source, target = new_topic(kafka_broker, "in"), new_topic(kafka_broker, "out")
    connections = [kafka_connection(kafka_broker)]
    produce_json(kafka_broker, source, orders(60))
    job = kafka_job(source, target)
    assert runner.run(job, connections=connections, until_idle=True) == 0

    produce_json(kafka_broker, source, orders(40, start=60))
    job["spec"]["pipeline"]["streaming"]["lowLatency"] = False
    assert runner.run(job, connections=connections, until_idle=True) == 0
    paid = [i for i in range(100) if i % 50]
    # At least once: a batch whose logs were being written at a stop may come again, so read
    # what is there (all of it is by now) rather than the first len(paid) records.
    written = consume_values(kafka_broker, target, len(paid) + 50, timeout=30)
    assert sorted({json.loads(value)["id"] for value in written}) == paid
