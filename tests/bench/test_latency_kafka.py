"""Figure 6's Kafka side on a real broker: topics stamped by the broker, the paced producer, and
the reader that joins output records to their inputs. A Python relay stands in for the pipeline."""

from __future__ import annotations

import json
import uuid

import pytest
from bench.latency_kafka import PacedProducer, create_topics, read_outputs, warm_up_broker
from bench.latency_samples import kept, measured_latencies
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer, TopicPartition
from confluent_kafka import Producer as KafkaProducer

from streamjobs.devtools.kafka import KafkaBroker

pytestmark = pytest.mark.kafka

RECORDS = 300


def relay(servers: str, source: str, target: str) -> None:
    """What the pipeline does, in Python: keep, project, carry the input's append time."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(source, 0, OFFSET_BEGINNING)])
    producer = KafkaProducer({"bootstrap.servers": servers})
    copied = 0
    while copied < RECORDS:
        for message in consumer.consume(num_messages=500, timeout=5):
            kind, appended_ms = message.timestamp()
            assert kind == TIMESTAMP_LOG_APPEND_TIME
            fields = json.loads(message.value())
            copied += 1
            if kept(fields["id"]):
                fields["appended_ms"] = appended_ms
                producer.produce(target, json.dumps(fields).encode())
    producer.flush(30)
    consumer.close()


def test_records_paced_relayed_and_joined_by_the_brokers_clock(kafka_broker: KafkaBroker) -> None:
    servers = kafka_broker.bootstrap_servers
    source, target = f"latency-in-{uuid.uuid4().hex[:8]}", f"latency-out-{uuid.uuid4().hex[:8]}"
    create_topics(servers, source, target)
    producer = PacedProducer(servers, source, rate=1_000)
    producer.stop_after(RECORDS)
    producer.start()
    producer.join(timeout=60)
    assert producer.sent == RECORDS
    assert producer.failed == 0
    relay(servers, source, target)
    measured = range(100, RECORDS)
    outputs = read_outputs(servers, target, measured, timeout=30)
    latencies = measured_latencies(outputs, measured)
    assert latencies.records == sum(1 for record_id in measured if kept(record_id))
    assert latencies.missing == 0
    assert latencies.duplicates == 0
    assert all(output.output_appended_ms >= output.input_appended_ms for output in outputs)


def test_broker_warm_up_reads_back_what_it_sends(kafka_broker: KafkaBroker) -> None:
    read = warm_up_broker(kafka_broker.bootstrap_servers, seconds=1.5, rate=1_000)
    assert read >= 500
