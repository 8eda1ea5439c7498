"""The application chart where the progress reports kept do not reach back: buckets stand in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.throughput import Bucket, Sample, bounded, bucket_start, folded
from streamjobs.web.throughput import LEFT, Point, chart, combined_points

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def a_day_at_a_ten_second_trigger() -> tuple[list[Point], list[Bucket], datetime]:
    """The reports kept (the newest 200) and the buckets of every report since ``T0``."""
    clock = FakeClock(T0)
    buckets: dict[datetime, Bucket] = {}
    reports = []
    while clock.now() < T0 + DAY:
        clock.advance(10)
        at = clock.now()
        start = bucket_start(at, 60)
        buckets[start] = folded(buckets.get(start), [Sample(at, 4.0, 8.0, 50.0, None)], 60)
        reports.append(Point(at, 4.0, 8.0, 50.0, batch=len(reports)))
    return reports[-200:], bounded(list(buckets.values())), clock.now()


def test_all_of_a_day_old_application_spans_the_day_not_its_last_half_hour() -> None:
    reports, buckets, now = a_day_at_a_ten_second_trigger()
    drawn = chart(reports, wanted="all", created_at=T0, end=now, buckets=buckets)
    assert drawn.start == T0
    first_x = float(drawn.series[0].path.split()[0].removeprefix("M").split(",")[0])
    assert first_x < LEFT + 1  # the line starts at the left edge
    older = [bucket for bucket in buckets if bucket.at < reports[0].at]
    assert {bucket.width_seconds for bucket in buckets} == {120}  # a day of minutes, and one
    assert drawn.points == len(older) + 200
    averaged = sum(bucket.samples for bucket in older)
    assert 8640 - 200 - averaged < 12  # all but the reports of the bucket the reports start in
    assert drawn.description.startswith(
        f"{len(older)} points (the means of {averaged:,} progress reports, older ones no longer "
        "kept one by one) and 200 progress reports from 00:01:00"
    )
    assert drawn.note is not None
    assert drawn.note.startswith(f"Until {reports[0].at:%H:%M:%S} UTC, each point is the mean")


def test_ranges_the_kept_reports_cover_are_drawn_from_the_reports_alone() -> None:
    reports, buckets, now = a_day_at_a_ten_second_trigger()
    quarter = chart(reports, wanted="15m", created_at=T0, end=now, buckets=buckets)
    assert quarter.points == 91  # both ends included
    assert quarter.note is None
    assert quarter.description.startswith("91 progress reports from 23:45:00")
    hour = chart(reports, wanted="1h", created_at=T0, end=now, buckets=buckets)
    before = [b for b in buckets if hour.start <= b.at < reports[0].at]
    assert len(before) == 13  # two-minute buckets of the 27 minutes before the first kept report
    assert hour.points == 200 + len(before)
    assert hour.note is not None


def test_a_young_application_is_drawn_from_its_reports_even_over_its_whole_life() -> None:
    at = [T0 + timedelta(seconds=10 * n) for n in range(1, 19)]
    reports = [Point(each, 1.0, 1.0, 10.0, None) for each in at]
    buckets = [folded(None, [Sample(each, 1.0, 1.0, 10.0, None) for each in at[:5]], 60)]
    assert combined_points(reports, buckets, start=T0) == reports
    drawn = chart(reports, wanted="all", created_at=T0, end=at[-1], buckets=buckets)
    assert drawn.points == 18
    assert drawn.note is None


def test_buckets_alone_when_no_report_is_kept_and_reports_alone_without_buckets() -> None:
    bucket = folded(
        None, [Sample(T0 + timedelta(seconds=s), 2.0, None, 5.0, 1) for s in (0, 30)], 60
    )
    points = combined_points([], [bucket], start=T0)
    assert points == [Point(T0 + timedelta(seconds=15), 2.0, None, 5.0, None, averaged=2)]
    only = [Point(T0, 1.0, 1.0, 1.0, 0)]
    assert combined_points(only, [], start=T0 - DAY) == only
    empty = chart([], wanted="all", created_at=T0, end=T0 + timedelta(minutes=5), buckets=[])
    assert empty.empty == "No progress reported yet."
