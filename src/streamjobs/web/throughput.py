"""The application page's throughput chart, computed on the server: points and SVG geometry.

The page draws input rows/s, processed rows/s (left axis) and the batch duration (right axis)
as SVG paths that Jinja writes out; no script draws or re-aggregates anything. One point is one
progress report, with the application's queries' latest rates summed and the slowest batch, as
the application's own figures are (``domain.throughput.QueryTally``). Only the newest reports are
kept, so where they do not reach back to the range's start the chart is drawn from the buckets
the store folded the reports into over the application's whole life (``store.throughput``): one
point per bucket, the mean of its reports, up to the first report kept, then the reports.

The range shown is the application's whole life by default ("all": from Run to its end, or to
now while it lives), so a three-minute-old application fills the chart; 15 min, 1 h and 6 h show
the last span up to the same end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from streamjobs import formatting
from streamjobs.domain.throughput import Bucket, QueryTally
from streamjobs.store import ProgressRecord

RANGES: Mapping[str, tuple[str, timedelta | None]] = {
    "15m": ("15 min", timedelta(minutes=15)),
    "1h": ("1 h", timedelta(hours=1)),
    "6h": ("6 h", timedelta(hours=6)),
    "all": ("All", None),
}
"""The range picker's choices: key in the URL, its label, the span (None: the whole life)."""
DEFAULT_RANGE = "all"
SHORTEST_SPAN = timedelta(minutes=1)
""""All" of a younger application still spans a minute, so its first points are not a wall."""
WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 50, 58, 20, 24
AXIS_STEPS = 4
TICK_STEPS = tuple(
    timedelta(seconds=seconds)
    for seconds in (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
)
MOST_TIME_TICKS = 6


@dataclass(frozen=True)
class Point:
    """The application's figures as of one progress report."""

    at: datetime
    input: float | None
    processed: float | None
    duration: float | None
    batch: int | None
    averaged: int | None = None
    """For a bucket's point, how many progress reports it is the mean of; None for a report."""


@dataclass(frozen=True)
class Tick:
    """An axis label and where it goes (x or y in the SVG's coordinates)."""

    position: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True)
class Series:
    """One line: its name (input, processed, duration), its path and its newest point."""

    name: str
    path: str
    dot_x: float
    dot_y: float


@dataclass(frozen=True)
class Chart:
    """Everything the template draws, and the words that say it for screen readers."""

    range_key: str
    start: datetime
    end: datetime
    series: list[Series]
    rows_ticks: list[Tick]
    duration_ticks: list[Tick]
    time_ticks: list[Tick]
    points: int
    description: str
    empty: str | None
    note: str | None = None
    """Said under the chart when its older points are buckets' means (the reports were pruned)."""

    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    top: int = TOP
    bottom_edge: int = HEIGHT - BOTTOM


def range_key(wanted: str | None) -> str:
    """The range asked for, or the default for anything else (a link typed by hand)."""
    return wanted if wanted is not None and wanted in RANGES else DEFAULT_RANGE


def throughput_points(records: Sequence[ProgressRecord]) -> list[Point]:
    """One point per progress report, oldest first; the queries' latest figures are forgotten
    when a new attempt starts (its queries start again)."""
    tally = QueryTally()
    points = []
    for record in records:
        sample = tally.sample(record.attempt, {**record.payload, "type": record.type})
        if sample is not None:
            points.append(
                Point(sample.at, sample.input, sample.processed, sample.duration, sample.batch)
            )
    return sorted(points, key=lambda point: point.at)


def bucket_points(buckets: Sequence[Bucket]) -> list[Point]:
    """One point per bucket, at the middle of its reports, with their mean figures."""
    return [
        Point(
            bucket.at,
            bucket.input.mean,
            bucket.processed.mean,
            bucket.duration.mean,
            None,
            averaged=bucket.samples,
        )
        for bucket in buckets
    ]


def combined_points(
    reports: Sequence[Point], buckets: Sequence[Bucket], *, start: datetime
) -> list[Point]:
    """The reports alone when they reach back to ``start`` or to the first report ever folded
    (none older was pruned); else the buckets before the first report kept, then the reports."""
    if not buckets or (reports and reports[0].at <= max(start, buckets[0].first_at)):
        return list(reports)
    first_kept = reports[0].at if reports else None
    older = [b for b in buckets if first_kept is None or b.at < first_kept]
    return [*bucket_points(older), *reports]


def chart(
    points: Sequence[Point],
    *,
    wanted: str,
    created_at: datetime,
    end: datetime,
    buckets: Sequence[Bucket] = (),
) -> Chart:
    """The chart of the reports' ``points`` (and of ``buckets`` where the reports kept do not
    reach) over the range ``wanted``, ending at ``end`` (the application's end, or now)."""
    key = range_key(wanted)
    span = RANGES[key][1]
    newest = [point.at for point in points] + [bucket.last_at for bucket in buckets[-1:]]
    end = max([end, *newest])  # a driver's clock a little ahead
    start = end - span if span else min(created_at, end - SHORTEST_SPAN)
    shown = [p for p in combined_points(points, buckets, start=start) if start <= p.at <= end]
    time_ticks = _time_ticks(start, end)
    if not shown:
        empty = "No progress in this range." if points else "No progress reported yet."
        return Chart(key, start, end, [], [], [], time_ticks, 0, empty, empty)
    rows_top = _nice_ceiling(
        max(value for point in shown for value in (point.input or 0, point.processed or 0))
    )
    duration_top = _nice_ceiling(max(point.duration or 0 for point in shown))
    scale = _Scale(start, end)
    series = []
    for name, top in (("input", rows_top), ("processed", rows_top), ("duration", duration_top)):
        present = [(p.at, getattr(p, name)) for p in shown if getattr(p, name) is not None]
        if not present:
            continue
        coordinates = [(scale.x(at), scale.y(value, top)) for at, value in present]
        path = " ".join(
            f"{'L' if index else 'M'}{x:.1f},{y:.1f}" for index, (x, y) in enumerate(coordinates)
        )
        series.append(Series(name, path, *coordinates[-1]))
    last = shown[-1]
    description = (
        f"{_what_is_shown(shown)} from {_clock(shown[0].at)} to {_clock(last.at)} UTC. "
        f"Latest, micro-batch {last.batch if last.batch is not None else formatting.UNKNOWN}: "
        f"input {formatting.rate(last.input)} rows/s, processed "
        f"{formatting.rate(last.processed)} rows/s, batch {formatting.milliseconds(last.duration)}."
    )
    return Chart(
        key,
        start,
        end,
        series,
        rows_ticks=[
            Tick(scale.level(step), _short_number(rows_top * step / AXIS_STEPS), "end")
            for step in range(AXIS_STEPS + 1)
        ],
        duration_ticks=[
            Tick(scale.level(step), formatting.milliseconds(duration_top * step / AXIS_STEPS))
            for step in range(AXIS_STEPS + 1)
        ],
        time_ticks=time_ticks,
        points=len(shown),
        description=description,
        empty=None,
        note=_bucket_note(shown),
    )


@dataclass(frozen=True)
class _Scale:
    start: datetime
    end: datetime

    def x(self, at: datetime) -> float:
        return _x(at, self.start, self.end)

    def y(self, value: float, top: float) -> float:
        plot_height = HEIGHT - TOP - BOTTOM
        return TOP + plot_height - value / top * plot_height

    def level(self, step: int) -> float:
        plot_height = HEIGHT - TOP - BOTTOM
        return TOP + plot_height - step / AXIS_STEPS * plot_height


def _x(at: datetime, start: datetime, end: datetime) -> float:
    span = (end - start).total_seconds() or 1.0
    return LEFT + (at - start).total_seconds() / span * (WIDTH - LEFT - RIGHT)


def _time_ticks(start: datetime, end: datetime) -> list[Tick]:
    """Round times (every 10 s up to every day) across the range, at most ``MOST_TIME_TICKS``."""
    span = end - start
    step = next((s for s in TICK_STEPS if span / s <= MOST_TIME_TICKS), TICK_STEPS[-1])
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    first = epoch + step * math.ceil((start - epoch) / step)
    ticks: list[Tick] = []
    at = first
    while at <= end and len(ticks) <= MOST_TIME_TICKS:
        x = _x(at, start, end)
        anchor = "start" if x < LEFT + 16 else "end" if x > WIDTH - RIGHT - 16 else "middle"
        if span > timedelta(days=1):
            text = at.strftime("%m-%d %H:%M")
        elif step < timedelta(minutes=1):
            text = at.strftime("%H:%M:%S")
        else:
            text = at.strftime("%H:%M")
        ticks.append(Tick(round(x, 1), text, anchor))
        at += step
    return ticks


def _nice_ceiling(value: float) -> float:
    """An axis's top: ``AXIS_STEPS`` round steps (1, 2, 2.5, 3, 4, 5, 6, 8 times a power of
    ten) reaching ``value``."""
    if value <= 0:
        return AXIS_STEPS
    wanted = value / AXIS_STEPS
    power = 10.0 ** math.floor(math.log10(wanted))
    factor = next(f for f in (1, 2, 2.5, 3, 4, 5, 6, 8, 10) if f * power >= wanted * (1 - 1e-9))
    return float(factor * power * AXIS_STEPS)


def _short_number(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:,.1f}".removesuffix(".0") + "M"
    if value >= 1e4:
        return f"{value / 1e3:,.1f}".removesuffix(".0") + "k"
    text = f"{value:,.2f}" if value < 10 else f"{value:,.1f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _what_is_shown(shown: Sequence[Point]) -> str:
    """What the chart shows, e.g. "12 progress reports", or where buckets stand for older
    reports that were pruned, "700 points (the means of 8,440 progress reports, …) and 200
    progress reports"."""
    means = [point for point in shown if point.averaged is not None]
    if not means:
        return f"{len(shown)} progress reports"
    reports = len(shown) - len(means)
    averaged = sum(point.averaged or 0 for point in means)
    text = (
        f"{len(means):,} points (the means of {averaged:,} progress reports, "
        f"older ones no longer kept one by one)"
    )
    return f"{text} and {reports:,} progress reports" if reports else text


def _bucket_note(shown: Sequence[Point]) -> str | None:
    means = [point for point in shown if point.averaged is not None]
    if not means:
        return None
    reports = [point for point in shown if point.averaged is None]
    until = f"Until {_clock(reports[0].at)} UTC, e" if reports else "E"
    return (
        f"{until}ach point is the mean of the progress reports over a stretch of time: "
        "older reports are not kept one by one."
    )


def _clock(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%H:%M:%S")
