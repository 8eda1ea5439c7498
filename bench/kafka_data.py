"""Pre-load a Kafka topic with keyed JSON order records, fast, before any timed run."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from confluent_kafka import Consumer, Producer, TopicPartition

RECORD_SCHEMA = (
    "id BIGINT, user STRING, amount DOUBLE, currency STRING, country STRING, ts TIMESTAMP, "
    "note STRING"
)

CURRENCIES = ("EUR", "USD", "GBP", "CHF", "JPY", "SEK", "PLN")
COUNTRIES = ("DE", "FR", "US", "GB", "CH", "JP", "SE", "PL", "NL", "ES", "IT")
USERS = 50_000
RECORD_BYTES = 200
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
MILLISECONDS_APART = 10
_NOTE_FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " * 3

PRODUCER_SETTINGS = {
    "linger.ms": 50,
    "batch.size": 1_000_000,
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "compression.type": "none",
    "acks": "1",
}


@dataclass(frozen=True)
class LoadedTopic:
    """A topic as loaded: how many records and bytes (values), and how long producing took."""

    records: int
    value_bytes: int
    seconds: float

    @property
    def mean_record_bytes(self) -> float:
        return self.value_bytes / self.records if self.records else 0.0


def record(number: int) -> tuple[bytes, bytes]:
    """Record ``number`` as (key, JSON value): the same number always gives the same record."""
    user = f"user-{number % USERS:05d}"
    ts = _timestamp(number * MILLISECONDS_APART)
    head = (
        f'{{"id":{number},"user":"{user}","amount":{amount_cents(number) / 100:.2f},'
        f'"currency":"{currency(number)}",'
        f'"country":"{COUNTRIES[number % len(COUNTRIES)]}","ts":"{ts}","note":"order {number} '
    )
    padding = max(0, RECORD_BYTES - len(head) - 2)
    value = head + _NOTE_FILLER[:padding] + '"}'
    return user.encode(), value.encode()


def amount_cents(number: int) -> int:
    """Record ``number``'s amount in cents, 0 to 99,999, spread evenly."""
    return (number * 7919) % 100_000


def currency(number: int) -> str:
    return CURRENCIES[number % len(CURRENCIES)]


def _timestamp(milliseconds: int) -> str:
    """ISO-8601 UTC time ``milliseconds`` after EPOCH (formatted by hand: strftime is slow)."""
    days, rest = divmod(milliseconds, 86_400_000)
    seconds, millis = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{_date(days)}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


@functools.cache
def _date(days: int) -> str:
    return (EPOCH + timedelta(days=days)).strftime("%Y-%m-%d")


def load_topic(bootstrap_servers: str, topic: str, records: int, partitions: int) -> LoadedTopic:
    """Produce ``records`` records to ``topic`` (which must exist) and check they all arrived."""
    producer = Producer({"bootstrap.servers": bootstrap_servers, **PRODUCER_SETTINGS})
    started = time.monotonic()
    value_bytes = 0
    for number in range(records):
        key, value = record(number)
        value_bytes += len(value)
        while True:  # wait for room when the producer's queue is full
            try:
                producer.produce(topic, value=value, key=key)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120) != 0:
        raise RuntimeError(f"records for topic {topic!r} were still unsent after 120 s")
    seconds = time.monotonic() - started
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "bench-count"})
    try:  # what the partitions hold: high minus low watermark
        watermarks = [
            consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            for partition in range(partitions)
        ]
    finally:
        consumer.close()
    stored = sum(high - low for low, high in watermarks)
    if stored != records:
        raise RuntimeError(f"topic {topic!r} holds {stored} records; {records} were produced")
    return LoadedTopic(records, value_bytes, seconds)
