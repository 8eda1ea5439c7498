"""Figures 1, 4 and 5 written up from made-up measurements: which limits they check."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench.control_plane_store import Seeded, Ticks
from bench.figure_control_plane import QUICK, SQLITE, Backend, Measured
from bench.kafka_data import LoadedTopic
from bench.latency import LoadSummary, Request, summarise
from bench.load_generator import ROUTES
from bench.processes import RunPaths
from bench.progress import ProcessingWindow
from bench.report import render
from bench.rss import JVM, OTHER, PYTHON, TreeMemory
from bench.throughput_subjects import BASELINE, STREAMJOBS

from bench import figure_control_plane, figure_throughput, throughput_runs
from tests.bench.test_bench_report import MACHINE

MIB = 1024 * 1024


def load(took: float, rate: float = 50.0) -> LoadSummary:
    requests = [
        Request(ROUTES[i % len(ROUTES)], i / rate, i / rate, i / rate + took, 200)
        for i in range(int(rate * 2))
    ]
    return summarise(requests)


def ticks(ms: tuple[float, ...]) -> Ticks:
    return Ticks(live=100, runs_seconds=1.0, submit_ms=900.0, running_ms=700.0, steady_ms=ms)


def backend(took: float, tick_ms: tuple[float, ...], **changes: object) -> Backend:
    made = Backend(
        name=SQLITE,
        seeded=Seeded(["a", "b"], 20, 0.5, 0.1),
        loads=[load(took)],
        rss_mib=[150.0],
        load_averages=[1.0],
        ticks=ticks(tick_ms),
    )
    return replace(made, **changes)  # type: ignore[arg-type]


class TestControlPlane:
    def test_every_route_has_its_p99_checked_and_the_rate_tick_and_memory(self) -> None:
        result = figure_control_plane.figure_result(
            Measured(QUICK, [backend(0.010, (40.0, 50.0))], skipped={})
        )
        names = [item.name for item in result.measurements]
        assert names[: len(ROUTES)] == [f"{route} p99" for route in ROUTES]
        assert [item.met for item in result.measurements] == [True] * len(names)
        assert result.comparisons == []
        assert "**SQLite: latency by route" in result.details

    def test_a_missed_limit_is_reported(self) -> None:
        slow = backend(0.200, (400.0, 420.0))
        result = figure_control_plane.figure_result(Measured(QUICK, [slow], skipped={}))
        text = render([result], MACHINE, command="c", minutes=1.0)
        assert "| 4 | list jobs p99, SQLite (ms) | 200 [200-200] | — | — | < 50 ms | missed |" in (
            text
        )

    def test_a_store_not_measured_is_said(self) -> None:
        result = figure_control_plane.figure_result(
            Measured(QUICK, [backend(0.010, (40.0,))], skipped={"PostgreSQL": "not installed"})
        )
        assert "PostgreSQL was not measured: not installed." in result.notes


def memory(jvm: int, python: int) -> TreeMemory:
    return TreeMemory(
        samples=({JVM: jvm * MIB, PYTHON: python * MIB, OTHER: MIB},),
        high_water={JVM: jvm * MIB, PYTHON: python * MIB, OTHER: MIB},
    )


def throughput_run(subject: str, sink: str, jvm: int, python: int) -> throughput_runs.Run:
    started = datetime(2026, 11, 24, tzinfo=UTC)
    return throughput_runs.Run(
        subject=subject,
        sink=sink,
        repetition=0,
        first=subject == STREAMJOBS,
        window=ProcessingWindow(
            start=started, end=started.replace(second=10), records=1000, batches=1
        ),
        process_seconds=30.0,
        cpu_seconds=2.0,
        memory=memory(jvm, python),
        load_average=1.0,
        idle_before=0.95,
        paths=RunPaths(Path("/nowhere") / sink / subject),
    )


class TestMemory:
    def test_compares_the_peaks_of_figure_1s_parquet_runs_without_a_target(self) -> None:
        runs = [
            throughput_run(STREAMJOBS, "parquet", 500, 80),
            throughput_run(BASELINE, "parquet", 400, 50),
            throughput_run(STREAMJOBS, "delta", 900, 90),
            throughput_run(BASELINE, "delta", 100, 10),
        ]
        topic = LoadedTopic(1000, 200_000, 1.0)
        plan = replace(throughput_runs.QUICK, sinks=(("parquet", 1), ("delta", 1)))
        measured = throughput_runs.Measured(plan, topic, runs, 500, warm_up=1000.0)
        result = figure_throughput.memory_result(measured)
        jvm, python, both = result.comparisons
        assert (jvm.candidate, jvm.baseline) == ((500.0,), (400.0,))
        assert (python.candidate, python.baseline) == ((80.0,), (50.0,))
        assert both.candidate == (580.0,)
        assert all(item.target is None for item in result.comparisons)
        assert "JVM peak RSS +100 MiB, Python peak RSS +30 MiB" in result.details
        assert result.number == 5


class TestThroughput:
    def test_compares_records_per_second_with_its_target_and_per_cpu_second(self) -> None:
        runs = [throughput_run(STREAMJOBS, "parquet", 500, 80)]
        runs.append(throughput_run(BASELINE, "parquet", 400, 50))
        topic = LoadedTopic(1000, 200_000, 1.0)
        measured = throughput_runs.Measured(throughput_runs.QUICK, topic, runs, 500, 1000.0)
        result = figure_throughput.figure_result(measured)
        rate, per_cpu = result.comparisons
        assert (rate.candidate, rate.target) == ((100.0,), figure_throughput.TARGET)
        assert (per_cpu.candidate, per_cpu.target) == ((500.0,), None)
        assert "| processing window | 10.0 | 10.0 |" in result.details
