"""Figure 6's Kafka side: its topics, the paced producer, and the reader of the output topic."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from array import array
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from bench.latency_samples import OutputRecord, due_count, kept, parse_output, record_value

_client_log = logging.getLogger(__name__)
TOPIC_CONFIG = {"message.timestamp.type": "LogAppendTime"}
PRODUCER_SETTINGS = {"linger.ms": 1, "acks": "1", "compression.type": "none"}
SLEEP_CAP_SECONDS = 0.001
CAUGHT_UP_SECONDS = 1.0
DRAIN_SECONDS = 20.0


def create_topics(bootstrap_servers: str, *names: str, timeout: float = 30.0) -> None:
    """Create single-partition topics whose records carry the broker's log-append time."""
    admin = AdminClient({"bootstrap.servers": bootstrap_servers}, logger=_client_log)
    topics = [NewTopic(name, 1, 1, config=TOPIC_CONFIG) for name in names]
    for future in admin.create_topics(topics, operation_timeout=timeout).values():
        future.result(timeout=timeout)


class PacedProducer(threading.Thread):
    """Sends records 0, 1, 2, ... to ``topic`` at ``rate`` records/s until told to stop."""

    def __init__(self, bootstrap_servers: str, topic: str, rate: float) -> None:
        super().__init__(name=f"producer-{topic}", daemon=True)
        self.bootstrap_servers, self.topic, self.rate = bootstrap_servers, topic, rate
        self.sent_at = array("d")
        self.failed = 0
        self._last: int | None = None
        self._stopped = threading.Event()

    @property
    def sent(self) -> int:
        return len(self.sent_at)

    def stop_after(self, count: int) -> None:
        """Send records up to ``count`` (exclusive), then flush and end."""
        self._last = count

    def abort(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap_servers, **PRODUCER_SETTINGS})
        started = time.monotonic()
        while not self._stopped.is_set():
            due = due_count(self.rate, time.monotonic() - started)
            if self._last is not None:
                due = min(due, self._last)
            while self.sent < due:
                self._send(producer, self.sent)
            if self._last is not None and self.sent >= self._last:
                break
            producer.poll(0)
            wait = (self.sent / self.rate) - (time.monotonic() - started)
            time.sleep(min(max(wait, 0.0), SLEEP_CAP_SECONDS))
        producer.flush(30)

    def _send(self, producer: Producer, record_id: int) -> None:
        value = record_value(record_id, produced_ms=time.time_ns() // 1_000_000)
        while True:
            try:
                producer.produce(self.topic, value=value, on_delivery=self._delivered)
                break
            except BufferError:
                producer.poll(0.01)
        self.sent_at.append(time.monotonic())

    def _delivered(self, error: object, _message: object) -> None:
        if error is not None:
            self.failed += 1


@dataclass(frozen=True)
class Started:
    """How long a subject took to write its first output record, and to catch up."""

    first_output_seconds: float
    caught_up_seconds: float
    caught_up: bool


def wait_until_caught_up(
    bootstrap_servers: str,
    topic: str,
    producer: PacedProducer,
    *,
    timeout: float,
    alive: Callable[[], bool],
) -> Started:
    """Wait until the newest output record came from an input record sent at most
    ``CAUGHT_UP_SECONDS`` before the newest one sent."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "bench-probe"})
    started = time.monotonic()
    first_output: float | None = None
    try:
        while True:
            elapsed = time.monotonic() - started
            newest = _newest_record_id(consumer, topic)
            if newest is not None and first_output is None:
                first_output = elapsed
            lag = producer.sent - (newest or 0)
            if newest is not None and lag <= CAUGHT_UP_SECONDS * producer.rate:
                return Started(first_output or elapsed, elapsed, caught_up=True)
            if not alive():
                raise RuntimeError(f"the subject exited while writing to {topic!r}")
            if elapsed > timeout:
                if first_output is None:
                    raise RuntimeError(f"nothing reached {topic!r} within {timeout:.0f} s")
                return Started(first_output, elapsed, caught_up=False)
            time.sleep(0.25)
    finally:
        consumer.close()


def _newest_record_id(consumer: Consumer, topic: str) -> int | None:
    """The input record id the topic's newest record carries, or None while it is empty."""
    _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    if high <= 0:
        return None
    consumer.assign([TopicPartition(topic, 0, high - 1)])
    message = consumer.poll(5)
    if message is None or message.error() is not None:
        return None
    return parse_output(message.value() or b"{}", 0).record_id


def warm_up_broker(bootstrap_servers: str, *, seconds: float, rate: int) -> int:
    """Send ``rate`` records/s through a topic of its own for ``seconds`` while reading them
    back, so that the broker's produce and fetch paths are compiled before a subject is measured
    (a fresh broker's first minute is several milliseconds slower at p99). Returns the records
    read back."""
    topic = f"warm-up-{uuid.uuid4().hex}"
    create_topics(bootstrap_servers, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": topic})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    producer = PacedProducer(bootstrap_servers, topic, rate)
    read = 0
    producer.start()
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            read += len(consumer.consume(num_messages=10_000, timeout=0.1))
    finally:
        producer.abort()
        producer.join()
        consumer.close()
    return read


def read_outputs(
    bootstrap_servers: str, topic: str, measured: range, timeout: float
) -> list[OutputRecord]:
    """Every record of the output topic, read from its start until each kept record of
    ``measured`` is there or ``timeout`` seconds have passed (what is missing then is lost)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"bench-latency-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    awaited = {record_id for record_id in measured if kept(record_id)}
    outputs: list[OutputRecord] = []
    deadline = time.monotonic() + timeout
    try:
        while awaited and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=10_000, timeout=0.5):
                if message.error() is not None:
                    continue
                kind, appended_ms = message.timestamp()
                if kind != TIMESTAMP_LOG_APPEND_TIME:
                    raise RuntimeError(f"{topic!r} does not stamp log-append times")
                output = parse_output(message.value() or b"{}", appended_ms)
                outputs.append(output)
                awaited.discard(output.record_id)
    finally:
        consumer.close()
    return outputs
