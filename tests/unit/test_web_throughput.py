"""The application page's throughput chart, computed on the server: points, range, geometry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from streamjobs.store import ProgressRecord
from streamjobs.web.throughput import (
    LEFT,
    RIGHT,
    WIDTH,
    Point,
    chart,
    range_key,
    throughput_points,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def progress(
    sequence: int, *, query: str = "q", attempt: int = 1, seconds: float = 0, **figures: Any
) -> ProgressRecord:
    report = {
        "timestamp": (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
        "batchId": sequence,
        "inputRowsPerSecond": figures.get("input"),
        "processedRowsPerSecond": figures.get("processed"),
        "durationMs": {"triggerExecution": figures.get("duration")},
    }
    return ProgressRecord(
        id=sequence,
        application_id="app-1",
        attempt=attempt,
        sequence=sequence,
        at=T0,
        type="progress",
        query_id=None,
        payload={"type": "progress", "name": query, "progress": report},
    )


def test_queries_latest_rates_are_summed_and_the_slowest_batch_kept() -> None:
    points = throughput_points(
        [
            progress(1, query="a", seconds=1, input=10.0, processed=20.0, duration=100),
            progress(2, query="b", seconds=2, input=5.0, processed=None, duration=300),
            progress(3, query="a", seconds=3, input=1.0, processed=2.0, duration=50),
        ]
    )
    assert [(p.input, p.processed, p.duration) for p in points] == [
        (10.0, 20.0, 100.0),
        (15.0, 20.0, 300.0),
        (6.0, 2.0, 300.0),
    ]
    assert [p.batch for p in points] == [1, 2, 3]


def test_a_new_attempt_forgets_the_previous_attempt_s_queries() -> None:
    points = throughput_points(
        [
            progress(1, query="a", seconds=1, input=10.0),
            progress(2, query="b", attempt=2, seconds=2, input=5.0),
        ]
    )
    assert [p.input for p in points] == [10.0, 5.0]


def test_reports_without_a_time_or_progress_and_nan_figures_are_left_out() -> None:
    bad_time = progress(1, input=1.0)
    bad_time.payload["progress"]["timestamp"] = "yesterday"
    heartbeat = ProgressRecord(2, "app-1", 1, 2, T0, "heartbeat", None, {"type": "heartbeat"})
    not_a_number = progress(3, seconds=3, input=float("nan"), processed=True)
    points = throughput_points([bad_time, heartbeat, not_a_number])
    assert len(points) == 1
    assert points[0].input is None
    assert points[0].processed is None


def test_all_fits_the_application_s_life() -> None:
    points = [Point(T0 + timedelta(seconds=s), 10.0, 8.0, 500.0, s) for s in (30, 120, 170)]
    drawn = chart(points, wanted="all", created_at=T0, end=T0 + timedelta(minutes=3))
    assert drawn.range_key == "all"
    assert (drawn.start, drawn.end) == (T0, T0 + timedelta(minutes=3))
    assert drawn.points == 3
    assert [line.name for line in drawn.series] == ["input", "processed", "duration"]
    first_x = float(drawn.series[0].path.split(",")[0].removeprefix("M"))
    assert first_x == pytest.approx(LEFT + (WIDTH - LEFT - RIGHT) * 30 / 180, abs=0.1)
    assert drawn.time_ticks[0].text == "00:00:00"
    assert drawn.time_ticks[-1].text == "00:03:00"
    assert drawn.rows_ticks[-1].text == "10"
    assert drawn.duration_ticks[-1].text == "800 ms"
    assert drawn.empty is None
    assert "3 progress reports from 00:00:30 to 00:02:50 UTC" in drawn.description


def test_a_young_application_still_spans_a_minute() -> None:
    drawn = chart([], wanted="all", created_at=T0, end=T0 + timedelta(seconds=5))
    assert drawn.end - drawn.start == timedelta(minutes=1)
    assert drawn.empty == "No progress reported yet."


def test_a_short_range_ends_at_the_end_and_may_be_empty() -> None:
    points = [Point(T0, 1.0, 1.0, 1.0, 0)]
    end = T0 + timedelta(hours=2)
    drawn = chart(points, wanted="15m", created_at=T0, end=end)
    assert (drawn.start, drawn.end) == (end - timedelta(minutes=15), end)
    assert drawn.series == []
    assert drawn.empty == "No progress in this range."
    assert chart(points, wanted="6h", created_at=T0, end=end).points == 1


def test_a_driver_clock_ahead_of_the_server_s_still_shows_its_newest_point() -> None:
    ahead = T0 + timedelta(seconds=70)
    drawn = chart(
        [Point(ahead, 1.0, 1.0, 1.0, 0)],
        wanted="all",
        created_at=T0,
        end=ahead - timedelta(seconds=2),
    )
    assert drawn.end == ahead
    assert drawn.points == 1


def test_over_a_day_the_ticks_carry_the_date() -> None:
    drawn = chart([], wanted="all", created_at=T0, end=T0 + timedelta(days=3))
    assert drawn.time_ticks[0].text == "01-01 00:00"
    assert len(drawn.time_ticks) <= 7


@pytest.mark.parametrize(
    ("wanted", "key"), [("1h", "1h"), ("all", "all"), ("2d", "all"), (None, "all")]
)
def test_range_key_falls_back_to_the_whole_life(wanted: str | None, key: str) -> None:
    assert range_key(wanted) == key
