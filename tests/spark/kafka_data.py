"""Many keyed JSON records, produced fast to the test broker, each exactly once."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from confluent_kafka import Consumer, Producer, TopicPartition

RECORD_SCHEMA = "id BIGINT, amount DOUBLE, ts TIMESTAMP"
_EPOCH = datetime(2026, 1, 1)


def amount_of(record_id: int) -> float:
    """The amount of record ``record_id``: quarters, so exact as a double."""
    return (record_id % 4000) / 4


def record(record_id: int) -> dict[str, object]:
    """``{"id", "amount", "ts"}`` of record ``record_id``, keyed ``str(id)`` in Kafka."""
    ts = _EPOCH + timedelta(seconds=record_id)
    return {"id": record_id, "amount": amount_of(record_id), "ts": ts.isoformat()}


def produce_records(bootstrap_servers: str, topic: str, count: int) -> None:
    """Produce records ``0 .. count-1`` with the idempotent producer and wait for all of them.

    Idempotence keeps a retried send from writing a record twice, which would look like a
    duplicate written by the pipeline under test.
    """
    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "enable.idempotence": True,
            "linger.ms": 20,
            "batch.num.messages": 10_000,
            "queue.buffering.max.messages": count + 1,
        }
    )
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    for record_id in range(count):
        producer.produce(
            topic,
            key=str(record_id).encode(),
            value=json.dumps(record(record_id)).encode(),
            on_delivery=delivered,
        )
        if record_id % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0, "records were still queued after 120 s"
    assert not failures, f"{len(failures)} records were not delivered, e.g. {failures[0]}"


def records_in(bootstrap_servers: str, topic: str, partitions: int) -> int:
    """How many records the topic's partitions hold (sum of their high watermarks)."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "streamjobs-count"})
    try:
        total = 0
        for partition in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            total += high - low
        return total
    finally:
        consumer.close()
