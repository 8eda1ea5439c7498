"""Figure 6's arithmetic: the records it produces, their pacing, and latencies from timestamps."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.latency import percentile

RECORD_SCHEMA = "id BIGINT, produced_ms BIGINT, amount DOUBLE, kind STRING, note STRING"
VIEW = "events"
SQL = (
    "SELECT id, produced_ms, unix_millis(kafka.timestamp) AS appended_ms, amount, kind "
    f"FROM {VIEW} WHERE amount >= 10"
)
KEPT_FROM_AMOUNT = 10.0
KINDS = ("click", "view", "order", "refund")
_NOTE = "a record of figure 6, padded to about 120 bytes of JSON"


def amount(record_id: int) -> float:
    """Record ``record_id``'s amount, 0.0 to 99.9, spread evenly."""
    return (record_id * 7919) % 1000 / 10


def kept(record_id: int) -> bool:
    """Whether the pipeline's filter keeps record ``record_id``."""
    return amount(record_id) >= KEPT_FROM_AMOUNT


def record_value(record_id: int, produced_ms: int) -> bytes:
    """Record ``record_id``'s JSON value, stamped with the producer's clock in ms."""
    kind = KINDS[record_id % len(KINDS)]
    return (
        f'{{"id":{record_id},"produced_ms":{produced_ms},"amount":{amount(record_id):.1f},'
        f'"kind":"{kind}","note":"{_NOTE}"}}'
    ).encode()


def due_count(rate: float, elapsed: float) -> int:
    """How many records a producer pacing ``rate`` records/s has due ``elapsed`` seconds after its
    start: record ``n`` is due at ``n / rate`` s, so the first at once."""
    if elapsed < 0:
        return 0
    return math.floor(elapsed * rate) + 1


def achieved_rate(sent_at: Sequence[float]) -> float:
    """Records per second over a run of sends (their times in seconds, in order): the gaps
    between the first and the last, ``len - 1`` of them."""
    if len(sent_at) < 2 or sent_at[-1] <= sent_at[0]:
        return 0.0
    return (len(sent_at) - 1) / (sent_at[-1] - sent_at[0])


@dataclass(frozen=True)
class OutputRecord:
    """One record of the output topic: the input record it came from and the times it carries."""

    record_id: int
    produced_ms: int
    input_appended_ms: int
    output_appended_ms: int

    @property
    def latency_ms(self) -> int:
        return self.output_appended_ms - self.input_appended_ms


def parse_output(value: bytes, output_appended_ms: int) -> OutputRecord:
    """An output record from its JSON value and its log-append timestamp."""
    fields = json.loads(value)
    return OutputRecord(
        record_id=int(fields["id"]),
        produced_ms=int(fields["produced_ms"]),
        input_appended_ms=int(fields["appended_ms"]),
        output_appended_ms=output_appended_ms,
    )


@dataclass(frozen=True)
class Latencies:
    """The measured records' latencies summed up, in ms, and what went missing or came twice."""

    records: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    missing: int
    duplicates: int
    append_p99_ms: float

    @property
    def percentiles(self) -> tuple[float, float, float, float]:
        return self.p50_ms, self.p95_ms, self.p99_ms, self.max_ms


def measured_latencies(outputs: Iterable[OutputRecord], measured: range) -> Latencies:
    """The latencies of the kept input records whose ids are in ``measured``; a record written
    twice counts once, by its first output."""
    first: dict[int, OutputRecord] = {}
    duplicates = 0
    for output in outputs:
        if output.record_id not in measured:
            continue
        seen = first.get(output.record_id)
        if seen is None:
            first[output.record_id] = output
            continue
        duplicates += 1
        if output.output_appended_ms < seen.output_appended_ms:
            first[output.record_id] = output
    if not first:
        raise ValueError(f"no output record for input records {measured.start}-{measured.stop}")
    latencies = [float(output.latency_ms) for output in first.values()]
    appends = [float(o.input_appended_ms - o.produced_ms) for o in first.values()]
    return Latencies(
        records=len(first),
        p50_ms=percentile(latencies, 0.50),
        p95_ms=percentile(latencies, 0.95),
        p99_ms=percentile(latencies, 0.99),
        max_ms=max(latencies),
        missing=sum(1 for record_id in measured if kept(record_id)) - len(first),
        duplicates=duplicates,
        append_p99_ms=percentile(appends, 0.99),
    )
