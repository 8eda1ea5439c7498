"""Figures 4 and 5 written up from made-up measurements: which limits they check, and what the
report says where a limit is missed."""

from __future__ import annotations

import cProfile
import pstats
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench import control_plane_report, figure_memory, figure_throughput
from bench.control_plane_store import Seeded, Ticks
from bench.eventlog import TaskTime
from bench.figure_control_plane import QUICK, SQLITE, Backend, Measured
from bench.kafka_data import LoadedTopic
from bench.latency import LoadSummary, Request, summarise
from bench.load_generator import ROUTES
from bench.profiles import read_collapsed
from bench.progress import ProcessingWindow
from bench.report import render
from bench.rss import JVM, OTHER, PYTHON, ProcessRss, Sample, TreeMemory
from bench.throughput_subjects import BASELINE, STREAMJOBS, RunPaths

from tests.unit.test_bench_report import MACHINE

MIB = 1024 * 1024


def load(took: float, rate: float = 50.0) -> LoadSummary:
    requests = [
        Request(ROUTES[i % len(ROUTES)], i / rate, i / rate, i / rate + took, 200)
        for i in range(int(rate * 2))
    ]
    return summarise(requests, offered_rate=rate)


def one_at_a_time(each: float, count: int = 100) -> LoadSummary:
    """Requests all due at 0, each answered ``each`` seconds after the one before."""
    requests = [
        Request(ROUTES[i % len(ROUTES)], 0.0, i * each, (i + 1) * each, 200) for i in range(count)
    ]
    return summarise(requests, offered_rate=count / 0.05)


def ticks(ms: tuple[float, ...]) -> Ticks:
    profiler = cProfile.Profile()
    profiler.runcall(sorted, range(100))
    return Ticks(
        live=100,
        runs_seconds=1.0,
        submit_ms=900.0,
        running_ms=700.0,
        steady_ms=ms,
        profile=pstats.Stats(profiler),
    )


def backend(took: float, tick_ms: tuple[float, ...], **changes: object) -> Backend:
    made = Backend(
        name=SQLITE,
        seeded=Seeded(["a", "b"], "token", 20, 0.5, 0.1),
        server_start_seconds=2.0,
        idle_rss_mib=100.0,
        loads=[load(took)],
        rss_mib=[150.0],
        load_averages=[1.0],
        cpu_ms_per_request=[30.0],
        cpu_cores=[0.9],
        one_at_a_time=one_at_a_time(0.010),
        one_at_a_time_cpu_ms=8.0,
        ticks=ticks(tick_ms),
        profile=None,
        profile_load=None,
        profile_error=None,
    )
    return replace(made, **changes)  # type: ignore[arg-type]


class TestControlPlane:
    def test_every_route_has_its_p99_checked_and_the_rate_tick_and_memory(self) -> None:
        result = control_plane_report.figure_result(
            Measured(QUICK, [backend(0.010, (40.0, 50.0))], skipped={})
        )
        names = [item.name for item in result.measurements]
        assert names[: len(ROUTES)] == [f"{route} p99" for route in ROUTES]
        assert [item.met for item in result.measurements] == [True] * len(names)
        assert result.comparisons == []
        assert "where a tick's time goes" not in result.details
        assert (
            "**SQLite: capacity.** Under the load the server's CPU came to a median 30.0 ms a "
            "request, 90% of a core at 50 requests/s. One request at a time (100 of the load's "
            "mix over one connection) it answered 100 requests/s, 10.00 ms each, 8.00 ms of them "
            "its CPU; the other 2.00 ms it waited"
        ) in result.details

    def test_a_missed_limit_says_where_the_time_goes(self) -> None:
        profile = read_collapsed(
            "main (/src/streamjobs/api/jobs.py:1);deepcopy (/usr/lib/python3.11/copy.py:1) 9"
        )
        slow = backend(
            0.200,
            (400.0, 420.0),
            profile=profile,
            profile_load=load(0.300),
            one_at_a_time=one_at_a_time(0.050),
            one_at_a_time_cpu_ms=30.0,
        )
        result = control_plane_report.figure_result(Measured(QUICK, [slow], skipped={}))
        assert "**SQLite: where a tick's time goes**" in result.details
        assert "**SQLite: capacity.** Under the load the server's CPU came to" in result.details
        assert "it answered 20 requests/s, 50.00 ms each, 30.00 ms of them its CPU" in (
            result.details
        )
        assert "`deepcopy (copy.py)` | 9 | 100% |" in result.details
        text = render([result], MACHINE, command="c", minutes=1.0)
        assert "| 4 | list jobs p99, SQLite (ms) | 200 [200-200] | — | — | < 50 ms | missed |" in (
            text
        )

    def test_a_profile_that_could_not_be_taken_is_said(self) -> None:
        failed = backend(0.200, (40.0,), profile_error="py-spy is not installed")
        result = control_plane_report.figure_result(
            Measured(QUICK, [failed], skipped={"PostgreSQL": "not installed"})
        )
        assert "no py-spy profile could be taken: py-spy is not installed" in result.details
        assert "PostgreSQL was not measured: not installed." in result.notes


def memory(jvm: int, python: int) -> TreeMemory:
    processes = (
        ProcessRss(101, JVM, "org.apache.spark.deploy.SparkSubmit", jvm * MIB),
        ProcessRss(100, PYTHON, "python", python * MIB),
    )
    return TreeMemory(
        samples=(Sample(0.0, {JVM: jvm * MIB, PYTHON: python * MIB, OTHER: MIB}, processes),),
        high_water={JVM: jvm * MIB, PYTHON: python * MIB, OTHER: MIB},
        seconds=30.0,
    )


def throughput_run(subject: str, sink: str, jvm: int, python: int) -> figure_throughput.Run:
    started = datetime(2026, 11, 24, tzinfo=UTC)
    return figure_throughput.Run(
        subject=subject,
        sink=sink,
        repetition=0,
        first=subject == STREAMJOBS,
        window=ProcessingWindow(
            start=started, end=started.replace(second=10), records=1000, batches=1
        ),
        process_seconds=30.0,
        python_cpu_seconds=2.0,
        tasks=TaskTime(),
        memory=memory(jvm, python),
        load_average=1.0,
        idle_before=0.95,
        paths=RunPaths(Path("/nowhere") / sink / subject),
        partitions=2,
    )


class TestMemory:
    def test_compares_the_peaks_of_figure_1s_parquet_runs_without_a_target(self) -> None:
        runs = [
            throughput_run(STREAMJOBS, "parquet", 500, 80),
            throughput_run(BASELINE, "parquet", 400, 50),
            throughput_run(STREAMJOBS, "delta", 900, 90),
            throughput_run(BASELINE, "delta", 100, 10),
        ]
        topic = LoadedTopic("orders", 2, 1000, 200_000, 1.0)
        plan = replace(figure_throughput.QUICK, sinks=(("parquet", 1), ("delta", 1)))
        measured = figure_throughput.Measured(plan, topic, runs, 500, warm_up=1000.0)
        result = figure_memory.figure_result(measured)
        jvm, python, both = result.comparisons
        assert (jvm.candidate, jvm.baseline) == ((500.0,), (400.0,))
        assert (python.candidate, python.baseline) == ((80.0,), (50.0,))
        assert both.candidate == (580.0,)
        assert all(item.target is None for item in result.comparisons)
        assert "JVM +100 MiB, Python +30 MiB" in result.details
        assert (
            "- #1 (a) streamjobs: at 0.0 s of 30.0 s: "
            "org.apache.spark.deploy.SparkSubmit (pid 101) 500" in result.details
        )
