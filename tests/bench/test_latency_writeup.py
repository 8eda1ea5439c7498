"""Figure 6 written up: which runs it compares, with which targets, and the tables it prints."""

from __future__ import annotations

from bench.figure_latency import FULL, QUICK, LatencyPlan, LatencyRun, schedule
from bench.latency_kafka import Started
from bench.latency_report import figure_result
from bench.latency_samples import Latencies
from bench.latency_subjects import (
    BASELINE,
    CONTINUOUS,
    DEFAULT,
    LOW_LATENCY,
    REAL_TIME,
    STREAMJOBS,
    Mode,
)

PLAN = LatencyPlan(
    rates=(1_000,),
    modes=(DEFAULT, REAL_TIME),
    low_latency_modes=(DEFAULT,),
    warm_up_seconds=2,
    measure_seconds=4,
    broker_warm_up_seconds=10,
)


def run(subject: str, mode: Mode, p99: float, *, caught_up: bool = True) -> LatencyRun:
    latencies = Latencies(
        records=3600,
        p50_ms=p99 / 4,
        p95_ms=p99 / 2,
        p99_ms=p99,
        max_ms=p99 * 2,
        missing=0,
        duplicates=1,
        append_p99_ms=3,
    )
    return LatencyRun(
        subject=subject,
        mode=mode,
        rate=1_000,
        repetition=0,
        latencies=latencies,
        achieved_rate=998.7,
        started=Started(first_output_seconds=21.2, caught_up_seconds=23.9, caught_up=caught_up),
        idle_before=0.93,
    )


RUNS = [
    run(STREAMJOBS, DEFAULT, 210.0),
    run(LOW_LATENCY, DEFAULT, 150.0),
    run(BASELINE, DEFAULT, 200.0),
    run(BASELINE, REAL_TIME, 20.0),
    run(STREAMJOBS, REAL_TIME, 21.0, caught_up=False),
]


def test_each_trigger_compares_p99_with_the_hand_written_script_at_most_1_05() -> None:
    result = figure_result(PLAN, RUNS)
    names = [item.name for item in result.comparisons]
    assert names == [
        "p99 latency, unspecified trigger (back to back), 1,000/s",
        "p99 latency, unspecified trigger (back to back), 1,000/s, low latency",
        "p99 latency, RealTime 5 minutes, 1,000/s",
    ]
    plain, low_latency, real_time = result.comparisons
    assert plain.ratio == 210.0 / 200.0
    assert plain.target is not None
    assert plain.target.describe() == "≤ 1.05"
    assert plain.met is True  # exactly 1.05
    assert low_latency.target is None
    assert low_latency.candidate == (150.0,)
    assert low_latency.baseline == (200.0,)
    assert real_time.met is True


def test_real_time_p99_is_held_under_50_ms() -> None:
    (measurement,) = figure_result(PLAN, RUNS).measurements
    assert measurement.name == "RealTime p99 latency, 1,000/s"
    assert measurement.samples == (21.0,)
    assert measurement.met is True
    slower = [*RUNS[:-1], run(STREAMJOBS, REAL_TIME, 50.0)]
    assert figure_result(PLAN, slower).measurements[0].met is False


def test_the_markdown_says_what_the_clock_starts_and_stops_on_and_prints_every_run() -> None:
    result = figure_result(PLAN, RUNS)
    assert "LogAppendTime" in result.method
    assert "input record's append time" in result.method
    assert "output record's append time" in result.method
    rows = [line for line in result.details.splitlines() if line.startswith("| unspecified")]
    assert len(rows) == 3
    assert "| (a) streamjobs | 3,600 | 52 | 105 | 210 | 420 | 999/s | 0 | 1 | 3 |" in rows[0]
    assert "21 s, 24 s (not caught up)" in result.details
    assert result.number == 6
    assert result.chart_file == "figure-6-latency.png"


def test_runs_alternate_their_subjects_by_pair_and_by_repetition() -> None:
    plan = LatencyPlan((100,), (DEFAULT, CONTINUOUS), (DEFAULT,), 1, 1, 1, repetitions=2)
    order = [(mode.key, subject) for _, _, mode, subject in schedule(plan)]
    assert order[:5] == [
        ("default", STREAMJOBS),
        ("default", LOW_LATENCY),
        ("default", BASELINE),
        ("continuous", BASELINE),
        ("continuous", STREAMJOBS),
    ]
    assert order[5:] == [
        ("default", BASELINE),
        ("default", LOW_LATENCY),
        ("default", STREAMJOBS),
        ("continuous", STREAMJOBS),
        ("continuous", BASELINE),
    ]
    one_cell = LatencyPlan((100,), (CONTINUOUS,), (), 1, 1, 1, repetitions=2)
    assert [subject for *_, subject in schedule(one_cell)] == [
        STREAMJOBS,
        BASELINE,
        BASELINE,
        STREAMJOBS,
    ], "an odd number of pairs a repetition flips too"
    assert len(list(schedule(QUICK))) == 2
    assert len(list(schedule(FULL))) == 3 * 2 * (4 * 2 + 1)
