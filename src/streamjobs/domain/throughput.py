"""An application's throughput over its whole life in bounded room: one sample per progress
report, folded into buckets of fixed width that double their width when there are too many.

The store keeps only an application's newest progress reports (``progress_kept``), so a chart of
a day-old application cannot be drawn from them. Each bucket keeps, over its span, the sum, the
count and the highest value of the application's input rows/s, processed rows/s and batch
duration. Buckets start at multiples of their width (counted from the epoch), so two neighbours
merge into one bucket twice as wide; whenever an application has more than ``MOST_BUCKETS``,
all its buckets are merged pairwise, and any lifetime fits in at most that many.

A sample is the application's figures as of one report: its queries' latest rates summed and the
slowest of their latest batches, as the application's own figures are
(``domain.progress.application_figures``); a new attempt starts its queries again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from streamjobs.domain.progress import reported_time
from streamjobs.domain.reports import ProgressReport, Report, stored_report

BASE_WIDTH_SECONDS = 60
"""The width of an application's first buckets."""
MOST_BUCKETS = 1440
"""More buckets than this and they merge pairwise: a day of minutes, then of two minutes…"""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Sample:
    """The application's figures as of one progress report."""

    at: datetime
    input: float | None
    processed: float | None
    duration: float | None
    batch: int | None


@dataclass(frozen=True)
class Figure:
    """One figure over a bucket: the sum and count of the values reported, and the highest."""

    total: float = 0.0
    count: int = 0
    highest: float | None = None

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def plus(self, value: float | None) -> Figure:
        if value is None:
            return self
        highest = value if self.highest is None else max(self.highest, value)
        return Figure(self.total + value, self.count + 1, highest)

    def merged(self, other: Figure) -> Figure:
        highests = [value for value in (self.highest, other.highest) if value is not None]
        return Figure(
            self.total + other.total, self.count + other.count, max(highests, default=None)
        )


@dataclass(frozen=True)
class Bucket:
    """The samples whose time falls in ``[start, start + width)``."""

    start: datetime
    width_seconds: int
    samples: int
    first_at: datetime
    last_at: datetime
    input: Figure
    processed: Figure
    duration: Figure

    @property
    def at(self) -> datetime:
        """Where the bucket is drawn: midway between its first and last sample, so the newest,
        still filling, is not drawn ahead of its samples."""
        return self.first_at + (self.last_at - self.first_at) / 2

    def plus(self, sample: Sample) -> Bucket:
        return replace(
            self,
            samples=self.samples + 1,
            first_at=min(self.first_at, sample.at),
            last_at=max(self.last_at, sample.at),
            input=self.input.plus(sample.input),
            processed=self.processed.plus(sample.processed),
            duration=self.duration.plus(sample.duration),
        )


def bucket_start(at: datetime, width_seconds: int) -> datetime:
    """The start of the bucket of ``width_seconds`` that holds the time ``at``."""
    width = timedelta(seconds=width_seconds)
    return EPOCH + width * ((at - EPOCH) // width)


def folded(bucket: Bucket | None, samples: Iterable[Sample], width_seconds: int) -> Bucket:
    """``bucket`` (or a new one) with ``samples`` added: all of them must fall in its span."""
    ordered = list(samples)
    if bucket is None:
        if not ordered:
            raise ValueError("a new bucket needs a sample")
        first = ordered[0]
        bucket = Bucket(
            bucket_start(first.at, width_seconds),
            width_seconds,
            0,
            first.at,
            first.at,
            Figure(),
            Figure(),
            Figure(),
        )
    for sample in ordered:
        if bucket_start(sample.at, bucket.width_seconds) != bucket.start:
            raise ValueError(f"a sample at {sample.at} is outside the bucket of {bucket.start}")
        bucket = bucket.plus(sample)
    return bucket


def widened(buckets: Sequence[Bucket]) -> list[Bucket]:
    """The buckets merged pairwise into buckets twice as wide (of the widest's width), in order."""
    if not buckets:
        return []
    width = 2 * max(bucket.width_seconds for bucket in buckets)
    merged: dict[datetime, Bucket] = {}
    for bucket in sorted(buckets, key=lambda each: each.start):
        start = bucket_start(bucket.start, width)
        earlier = merged.get(start)
        merged[start] = (
            replace(bucket, start=start, width_seconds=width)
            if earlier is None
            else Bucket(
                start,
                width,
                earlier.samples + bucket.samples,
                min(earlier.first_at, bucket.first_at),
                max(earlier.last_at, bucket.last_at),
                earlier.input.merged(bucket.input),
                earlier.processed.merged(bucket.processed),
                earlier.duration.merged(bucket.duration),
            )
        )
    return list(merged.values())


def bounded(buckets: Sequence[Bucket], most: int = MOST_BUCKETS) -> list[Bucket]:
    """The buckets, widened as often as it takes to be at most ``most`` of them."""
    if most < 1:
        raise ValueError("at least one bucket must be allowed")
    kept = sorted(buckets, key=lambda each: each.start)
    while len(kept) > most:
        kept = widened(kept)
    return kept


class QueryTally:
    """The latest figures of an application's queries in one attempt, turned into one sample
    per progress report. ``state()`` is plain JSON, so a tally can be kept between reports."""

    def __init__(self, state: Mapping[str, Any] | None = None) -> None:
        state = state or {}
        attempt = state.get("attempt")
        self._attempt: int | None = attempt if isinstance(attempt, int) else None
        queries = state.get("queries")
        self._queries: dict[str, dict[str, Any]] = (
            {str(name): dict(figures) for name, figures in queries.items()}
            if isinstance(queries, Mapping)
            else {}
        )

    def state(self) -> dict[str, Any]:
        return {"attempt": self._attempt, "queries": {k: dict(v) for k, v in self._queries.items()}}

    def sample(self, attempt: int, event: Report | Mapping[str, Any]) -> Sample | None:
        """The sample of the runner's ``event`` in ``attempt``; None for any other event than a
        progress report with a time (read from a stored payload as ``stored_report`` reads it)."""
        report = stored_report(event) if isinstance(event, Mapping) else event
        if not isinstance(report, ProgressReport):
            return None
        progress = report.progress
        at = reported_time(progress.timestamp)
        if at is None:
            return None
        if attempt != self._attempt:
            self._queries.clear()
            self._attempt = attempt
        durations = progress.duration_ms or {}
        self._queries[report.query_name] = {
            "input": _number(progress.input_rows_per_second),
            "processed": _number(progress.processed_rows_per_second),
            "duration": _number(durations.get("triggerExecution")),
        }
        latest = self._queries.values()
        return Sample(
            at=at,
            input=_total(query["input"] for query in latest),
            processed=_total(query["processed"] for query in latest),
            duration=max(
                (query["duration"] for query in latest if query["duration"] is not None),
                default=None,
            ),
            batch=progress.batch_id,
        )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _total(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) if present else None
