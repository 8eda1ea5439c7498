"""Down-sampling an application's throughput into bounded buckets (domain.throughput)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.throughput import (
    Bucket,
    Figure,
    QueryTally,
    Sample,
    bounded,
    bucket_start,
    folded,
    widened,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sample(
    at: datetime,
    input: float | None = 1.0,
    processed: float | None = 2.0,
    duration: float | None = 100.0,
) -> Sample:
    return Sample(at, input, processed, duration, None)


def fold_all(samples: list[Sample], *, width: int, most: int) -> list[Bucket]:
    """What the store does report by report: fold each sample into its bucket, and merge when
    there are too many."""
    buckets: dict[datetime, Bucket] = {}
    for each in samples:
        start = bucket_start(each.at, width)
        buckets[start] = folded(buckets.get(start), [each], width)
        if len(buckets) > most:
            kept = bounded(list(buckets.values()), most)
            width = kept[0].width_seconds
            buckets = {bucket.start: bucket for bucket in kept}
    return sorted(buckets.values(), key=lambda bucket: bucket.start)


def test_buckets_start_at_multiples_of_their_width() -> None:
    at = datetime(2026, 1, 1, 10, 7, 59, 999000, tzinfo=UTC)
    assert bucket_start(at, 60) == datetime(2026, 1, 1, 10, 7, tzinfo=UTC)
    assert bucket_start(at, 240) == datetime(2026, 1, 1, 10, 4, tzinfo=UTC)
    assert bucket_start(datetime(2026, 1, 1, 10, 8, tzinfo=UTC), 60).minute == 8


def test_a_bucket_sums_counts_and_keeps_the_highest_leaving_missing_values_out() -> None:
    bucket = folded(
        None,
        [sample(T0 + timedelta(seconds=10), 4.0, None, 300.0), sample(T0, 2.0, 6.0, None)],
        60,
    )
    assert (bucket.start, bucket.samples) == (T0, 2)
    assert (bucket.first_at, bucket.last_at) == (T0, T0 + timedelta(seconds=10))
    assert bucket.input == Figure(6.0, 2, 4.0)
    assert bucket.processed == Figure(6.0, 1, 6.0)
    assert bucket.duration == Figure(300.0, 1, 300.0)
    assert (bucket.input.mean, bucket.processed.mean) == (3.0, 6.0)
    assert Figure().mean is None
    assert bucket.at == T0 + timedelta(seconds=5)


def test_a_sample_outside_the_bucket_or_a_new_bucket_without_one_is_refused() -> None:
    bucket = folded(None, [sample(T0)], 60)
    with pytest.raises(ValueError, match="outside the bucket"):
        folded(bucket, [sample(T0 + timedelta(seconds=60))], 60)
    with pytest.raises(ValueError, match="needs a sample"):
        folded(None, [], 60)
    with pytest.raises(ValueError, match="at least one"):
        bounded([bucket], 0)


def test_widening_merges_neighbours_into_buckets_twice_as_wide() -> None:
    minutes = [folded(None, [sample(T0 + timedelta(minutes=n), input=n)], 60) for n in range(5)]
    wide = widened(minutes)
    assert [bucket.start for bucket in wide] == [T0 + timedelta(minutes=n) for n in (0, 2, 4)]
    assert {bucket.width_seconds for bucket in wide} == {120}
    assert [bucket.samples for bucket in wide] == [2, 2, 1]
    assert [bucket.input.total for bucket in wide] == [1.0, 5.0, 4.0]
    assert [bucket.input.highest for bucket in wide] == [1.0, 3.0, 4.0]
    assert wide[0].last_at == T0 + timedelta(minutes=1)
    assert widened([]) == []


def test_a_day_at_a_ten_second_trigger_stays_bounded_and_covers_the_whole_life() -> None:
    clock = FakeClock(T0)
    samples = []
    for _ in range(8640):  # a day
        clock.advance(10)
        samples.append(sample(clock.now(), input=5.0))
    buckets = fold_all(samples, width=60, most=100)
    assert len(buckets) <= 100
    assert buckets[0].first_at == T0 + timedelta(seconds=10)
    assert buckets[-1].last_at == clock.now()
    assert sum(bucket.samples for bucket in buckets) == 8640
    assert {bucket.input.mean for bucket in buckets} == {5.0}
    # 1440 minutes into at most 100 buckets: 16 minutes wide.
    assert {bucket.width_seconds for bucket in buckets} == {960}


def test_reports_of_a_young_application_are_one_bucket_a_minute() -> None:
    clock = FakeClock(T0)
    samples = []
    for _ in range(18):  # three minutes
        clock.advance(10)
        samples.append(sample(clock.now()))
    buckets = fold_all(samples, width=60, most=1440)
    assert [bucket.samples for bucket in buckets] == [5, 6, 6, 1]
    assert {bucket.width_seconds for bucket in buckets} == {60}


def progress(name: str, seconds: int, **figures: Any) -> dict[str, Any]:
    return {
        "type": "progress",
        "name": name,
        "progress": {
            "timestamp": (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
            "batchId": seconds,
            "inputRowsPerSecond": figures.get("input"),
            "processedRowsPerSecond": figures.get("processed"),
            "durationMs": {"triggerExecution": figures.get("duration")},
        },
    }


def test_the_tally_sums_the_queries_latest_rates_and_survives_being_stored() -> None:
    tally = QueryTally()
    first = tally.sample(1, progress("a", 1, input=10.0, processed=20.0, duration=100))
    kept = QueryTally(tally.state())
    second = kept.sample(1, progress("b", 2, input=5.0, duration=300))
    assert first is not None
    assert second is not None
    assert (first.input, first.processed, first.duration) == (10.0, 20.0, 100.0)
    assert (second.input, second.processed, second.duration) == (15.0, 20.0, 300.0)
    assert second.at == T0 + timedelta(seconds=2)
    assert second.batch == 2


def test_the_tally_forgets_the_queries_of_an_earlier_attempt() -> None:
    tally = QueryTally({"attempt": 1, "queries": {"a": {"input": 10.0}}})
    again = tally.sample(2, progress("b", 5, input=1.0))
    assert again is not None
    assert again.input == 1.0
    assert tally.state()["attempt"] == 2


@pytest.mark.parametrize(
    "event",
    [
        {"type": "heartbeat"},
        {"type": "progress", "progress": "not an object"},
        {"type": "progress", "progress": {"timestamp": "yesterday"}},
        {"type": "progress", "progress": {"timestamp": 17}},
        {"type": "idle", "progress": {"timestamp": "2026-01-01T00:00:00Z"}},
    ],
)
def test_events_that_are_no_timed_progress_report_give_no_sample(event: dict[str, Any]) -> None:
    assert QueryTally().sample(1, event) is None


def test_figures_that_are_no_numbers_are_missing_and_a_state_that_is_no_tally_is_none() -> None:
    event = progress("a", 1, input=float("nan"), processed=True)
    event["progress"]["durationMs"] = "slow"
    got = QueryTally({"attempt": "one", "queries": []}).sample(1, event)
    assert got is not None
    assert (got.input, got.processed, got.duration) == (None, None, None)
