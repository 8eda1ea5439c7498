"""Pipelines that read Kafka, against a real broker, run for real on local[2]."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from pyspark.sql import SparkSession

from streamjobs.devtools.kafka import KafkaBroker
from tests.spark.conftest import PipelineRunner
from tests.spark.kafka_topics import consume_values, new_topic, produce, produce_json
from tests.spark.pipelines import connection, pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.kafka]
ORDER_SCHEMA = "id BIGINT, user STRING, amount DOUBLE, ts TIMESTAMP"


def orders(count: int, start: int = 0) -> list[dict[str, object]]:
    return [
        {
            "id": i,
            "user": f"u{i % 4}",
            "amount": float(i % 50),
            "ts": f"2026-01-01T00:{i % 60:02d}:00",
        }
        for i in range(start, start + count)
    ]


def kafka_connection(broker: KafkaBroker) -> dict[str, object]:
    return connection("kafka-main", type="kafka", bootstrapServers=broker.bootstrap_servers)


def kafka_input(topic: str, **fields: object) -> dict[str, object]:
    return {
        "name": "orders",
        "format": "kafkajson",
        "dataset": f"kafka-main:{topic}",
        "schema": ORDER_SCHEMA,
        "options": {"startingOffsets": "earliest"},
        **fields,
    }


def test_kafka_json_to_parquet(
    runner: PipelineRunner, spark: SparkSession, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = new_topic(kafka_broker, "orders", partitions=2)
    produce_json(kafka_broker, topic, orders(500))
    job = pipeline_job(
        "kafka-to-parquet",
        inputs=[
            kafka_input(topic, options={"startingOffsets": "earliest", "maxOffsetsPerTrigger": 200})
        ],
        steps=[[("paid", "SELECT id, user, amount, key FROM orders WHERE amount > 0")]],
        outputs=[{"name": "paid", "format": "parquet", "path": str(tmp_path / "paid")}],
        guarantee="EXACTLY_ONCE",
    )
    assert runner.run(job, connections=[kafka_connection(kafka_broker)]) == 0
    rows = spark.read.parquet(str(tmp_path / "paid")).collect()
    assert sorted(row.id for row in rows) == [i for i in range(500) if i % 50]
    assert all(row.key == str(row.id) for row in rows)
    assert len(runner.reporter.of_type("progress")) >= 3


def test_malformed_json_goes_to_the_dead_letter_output(
    runner: PipelineRunner, spark: SparkSession, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = new_topic(kafka_broker, "mixed")
    good = [(str(row["id"]), json.dumps(row)) for row in orders(20)]
    bad = [("b1", "{not json"), ("b2", '{"id": "not a number", "user": 3}'), ("b3", "")]
    produce(kafka_broker, topic, [*good[:10], *bad, *good[10:]])
    job = pipeline_job(
        "dead-letter",
        inputs=[kafka_input(topic, badRecords={"output": "rejected"})],
        outputs=[
            {"name": "orders", "format": "parquet", "path": str(tmp_path / "good")},
            {"name": "rejected", "format": "json", "path": str(tmp_path / "rejected")},
        ],
    )
    assert runner.run(job, connections=[kafka_connection(kafka_broker)]) == 0
    assert sorted(row.id for row in spark.read.parquet(str(tmp_path / "good")).collect()) == list(
        range(20)
    )
    rejected = spark.read.json(str(tmp_path / "rejected")).collect()
    assert sorted(row.value or "" for row in rejected) == sorted(value for _, value in bad)
    assert {row.offset for row in rejected} == {10, 11, 12}
    assert all("does not parse" in row.error for row in rejected)
    counted = [
        metrics["badRecords"]
        for event in runner.reporter.of_type("progress")
        for metrics in (event["progress"].get("observedMetrics") or {}).values()
    ]
    assert sum(counted) == 3


def test_kafka_to_kafka_as_json(runner: PipelineRunner, kafka_broker: KafkaBroker) -> None:
    source, target = new_topic(kafka_broker, "in"), new_topic(kafka_broker, "out")
    produce_json(kafka_broker, source, orders(30))
    job = pipeline_job(
        "kafka-to-kafka",
        inputs=[kafka_input(source)],
        steps=[[("scored", "SELECT id, amount * 2 AS score FROM orders")]],
        outputs=[{"name": "scored", "format": "kafka", "dataset": f"kafka-main:{target}"}],
    )
    assert runner.run(job, connections=[kafka_connection(kafka_broker)]) == 0
    values = [json.loads(value) for value in consume_values(kafka_broker, target, 30)]
    assert sorted(value["id"] for value in values) == list(range(30))
    assert {value["id"]: value["score"] for value in values}[7] == 14.0


def test_windowed_aggregation_in_update_mode_upserts_into_postgresql(
    runner: PipelineRunner, kafka_broker: KafkaBroker, postgres_url: str
) -> None:
    topic = new_topic(kafka_broker, "events")
    produce_json(kafka_broker, topic, orders(120))
    database = postgres_url.rsplit("/", 1)
    jdbc_url = "jdbc:postgresql://" + database[0].split("@")[-1] + "/" + database[1]
    job = pipeline_job(
        "windows",
        inputs=[kafka_input(topic, watermark={"column": "ts", "delay": "10 minutes"})],
        steps=[
            [
                (
                    "totals",
                    "SELECT window.start AS window_start, user, SUM(amount) AS total, "
                    "COUNT(*) AS n FROM orders GROUP BY window(ts, '10 minutes'), user",
                )
            ]
        ],
        outputs=[
            {
                "name": "totals",
                "format": "jdbc",
                "dataset": "warehouse:public.totals",
                "outputMode": "update",
                "options": {"keyColumns": ["window_start", "user"]},
            }
        ],
        guarantee="EXACTLY_ONCE",
    )
    warehouse = connection("warehouse", type="jdbc", url=jdbc_url, user="postgres")
    assert runner.run(job, connections=[kafka_connection(kafka_broker), warehouse]) == 0
    with psycopg.connect(postgres_url.replace("+psycopg", "")) as connection_:
        rows = connection_.execute(
            'SELECT "user", SUM(n) FROM public.totals GROUP BY "user" ORDER BY "user"'
        ).fetchall()
    assert [(user, int(n)) for user, n in rows] == [
        ("u0", 30),
        ("u1", 30),
        ("u2", 30),
        ("u3", 30),
    ]


def test_upsert_keeps_the_last_row_of_a_key_within_one_batch(
    runner: PipelineRunner, kafka_broker: KafkaBroker, postgres_url: str
) -> None:
    topic = new_topic(kafka_broker, "latest")
    produce_json(kafka_broker, topic, orders(40))
    database = postgres_url.rsplit("/", 1)
    jdbc_url = "jdbc:postgresql://" + database[0].split("@")[-1] + "/" + database[1]
    job = pipeline_job(
        "latest-per-user",
        inputs=[kafka_input(topic)],
        steps=[[("latest", "SELECT user, id FROM orders")]],
        outputs=[
            {
                "name": "latest",
                "format": "jdbc",
                "dataset": "warehouse:public.latest_order",
                "options": {"keyColumns": ["user"]},
            }
        ],
        guarantee="EXACTLY_ONCE",
    )
    warehouse = connection("warehouse", type="jdbc", url=jdbc_url, user="postgres")
    assert runner.run(job, connections=[kafka_connection(kafka_broker), warehouse]) == 0
    with psycopg.connect(postgres_url.replace("+psycopg", "")) as connection_:
        rows = connection_.execute(
            'SELECT "user", id FROM public.latest_order ORDER BY "user"'
        ).fetchall()
    assert rows == [("u0", 36), ("u1", 37), ("u2", 38), ("u3", 39)]


def test_a_flare_job_block_runs_as_written(
    runner: PipelineRunner, spark: SparkSession, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = new_topic(kafka_broker, "flare")
    produce_json(kafka_broker, topic, orders(25))
    flare_block = {
        "inputs": [
            {
                "name": "kafka",
                "dataset": f"kafka-main:{topic}",
                "format": "kafka",
                "isStream": True,
                "options": {"startingOffsets": "earliest"},
            }
        ],
        "steps": [
            {
                "sequence": [
                    {
                        "name": "raw",
                        "sql": "SELECT *, CAST(key AS STRING) AS key_string, "
                        "CAST(value AS STRING) AS value_string FROM kafka",
                    }
                ]
            }
        ],
        "outputs": [
            {
                "name": "raw",
                "dataset": "lake:db.raw_orders",
                "format": "iceberg",
                "options": {"saveMode": "append"},
            }
        ],
        "streaming": {"triggerMode": "AvailableNow"},
    }
    job = pipeline_job("flare", inputs=[], outputs=[])
    job["spec"]["pipeline"] = flare_block
    lake = connection("lake", type="lakehouse", warehouse=(tmp_path / "lake").as_uri())
    assert runner.run(job, connections=[kafka_connection(kafka_broker), lake]) == 0
    rows = spark.sql("SELECT key_string, value_string FROM `lake`.db.raw_orders").collect()
    assert sorted(int(row.key_string) for row in rows) == list(range(25))
    assert json.loads(rows[0].value_string)["id"] == int(rows[0].key_string)


@pytest.mark.parametrize("mode", ["Continuous", "RealTime"])
def test_low_latency_triggers_carry_kafka_to_kafka(
    runner: PipelineRunner, kafka_broker: KafkaBroker, mode: str
) -> None:
    source, target = new_topic(kafka_broker, "fast-in"), new_topic(kafka_broker, "fast-out")
    produce_json(kafka_broker, source, orders(10))
    job = pipeline_job(
        f"{mode.lower()}-kafka",
        trigger={"triggerMode": mode, "triggerDuration": "5 seconds"},
        inputs=[kafka_input(source)],
        steps=[[("passed", "SELECT id, user FROM orders")]],
        outputs=[
            {
                "name": "passed",
                "format": "kafka",
                "dataset": f"kafka-main:{target}",
                "outputMode": "update",
            }
        ],
    )
    received: list[str] = []

    def delivered(run: object) -> bool:
        received[:] = consume_values(kafka_broker, target, 10, timeout=3)
        return len(received) >= 10

    assert runner.run(job, connections=[kafka_connection(kafka_broker)], stop_when=delivered) == 0
    assert sorted(json.loads(value)["id"] for value in received) == list(range(10))
