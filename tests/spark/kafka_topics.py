"""Producing to and reading from the test broker's topics."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable

from confluent_kafka import Consumer, Producer

from streamjobs.devtools.kafka import KafkaBroker


def new_topic(broker: KafkaBroker, prefix: str, partitions: int = 1) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions=partitions)
    return name


def produce(broker: KafkaBroker, topic: str, records: Iterable[tuple[str | None, str]]) -> None:
    """Send (key, value) records and wait until the broker has them all."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 20})
    for key, value in records:
        producer.produce(topic, key=key, value=value)
        producer.poll(0)
    assert producer.flush(60) == 0


def produce_json(broker: KafkaBroker, topic: str, rows: Iterable[dict[str, object]]) -> None:
    produce(broker, topic, ((str(row.get("id")), json.dumps(row)) for row in rows))


def consume_values(
    broker: KafkaBroker, topic: str, expected: int, timeout: float = 60
) -> list[str]:
    """The values of the topic's first ``expected`` records (fewer if the timeout passes)."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"test-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    values: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value().decode())
    finally:
        consumer.close()
    return values
