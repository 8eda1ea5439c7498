"""Figure 6, end-to-end latency: Kafka -> parse, filter, project -> Kafka, record by record."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.latency_kafka import (
    DRAIN_SECONDS,
    PacedProducer,
    Started,
    create_topics,
    read_outputs,
    wait_until_caught_up,
    warm_up_broker,
)
from bench.latency_report import START_TIMEOUT_SECONDS, figure_result
from bench.latency_samples import Latencies, achieved_rate, measured_latencies
from bench.latency_subjects import (
    BASELINE,
    DEFAULT,
    LOW_LATENCY,
    MODES,
    REAL_TIME,
    STREAMJOBS,
    Mode,
    Subject,
    Topics,
    command,
    prepare,
)
from bench.results import FigureResult
from bench.settle import settle
from bench.throughput_subjects import RunPaths, write_connections
from streamjobs.devtools.kafka import KafkaBroker

Log = Callable[[str], None]
log: Log = functools.partial(print, flush=True)


@dataclass(frozen=True)
class LatencyPlan:
    """What figure 6 runs: rates, triggers, how long it warms up and measures, how many times."""

    rates: tuple[int, ...]
    modes: tuple[Mode, ...]
    low_latency_modes: tuple[Mode, ...]
    warm_up_seconds: float
    measure_seconds: float
    broker_warm_up_seconds: float
    repetitions: int = 1

    @property
    def broker_warm_up_rate(self) -> int:
        """Records/s through the broker before the first run: the highest rate measured, at
        least 5,000/s (10 s at 200/s leave the broker about as cold as it started)."""
        return max(5_000, *self.rates)


QUICK = LatencyPlan(
    rates=(200,),
    modes=(REAL_TIME,),
    low_latency_modes=(),
    warm_up_seconds=2,
    measure_seconds=4,
    broker_warm_up_seconds=5,
)
FULL = LatencyPlan(
    rates=(1_000, 10_000),
    modes=MODES,
    low_latency_modes=(DEFAULT,),
    warm_up_seconds=10,
    measure_seconds=20,
    broker_warm_up_seconds=30,
    repetitions=3,
)
"""Three repetitions: on this 2-core machine one subject's p99 at 10,000/s moved between 13 and
59 ms from run to run within an hour, so a single run per cell decides nothing."""


@dataclass(frozen=True)
class LatencyRun:
    """One subject under one trigger at one rate."""

    subject: str
    mode: Mode
    rate: int
    repetition: int
    latencies: Latencies
    achieved_rate: float
    started: Started
    idle_before: float


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry."""
    plan = QUICK if quick else FULL
    return figure_result(plan, measure(plan, work, log))


def schedule(plan: LatencyPlan) -> Iterator[tuple[int, int, Mode, str]]:
    """(repetition, rate, mode, subject) in run order. The subjects' order alternates by pair,
    and flips from one repetition to the next, so that no subject of a cell always runs first
    (the first run of a repetition follows the broker's warm-up or the last run at the highest
    rate, and was slower in every repetition when always the same subject had it)."""
    for repetition in range(plan.repetitions):
        pair = 0
        for rate in plan.rates:
            for mode in plan.modes:
                subjects = [STREAMJOBS, BASELINE]
                if mode in plan.low_latency_modes:
                    subjects.insert(1, LOW_LATENCY)
                step = -1 if (pair + repetition) % 2 else 1
                yield from ((repetition, rate, mode, s) for s in subjects[::step])
                pair += 1


def measure(plan: LatencyPlan, work: Path, log: Log = log) -> list[LatencyRun]:
    """Start a broker and run every subject of the plan against it, one at a time."""
    work.mkdir(parents=True, exist_ok=True)
    runs = []
    with KafkaBroker() as broker:
        servers = broker.bootstrap_servers
        write_connections(work, servers)
        rate = plan.broker_warm_up_rate
        read = warm_up_broker(servers, seconds=plan.broker_warm_up_seconds, rate=rate)
        log(f"figure 6: broker warmed up with {read:,} records at {rate:,}/s")
        for number, (repetition, rate, mode, subject) in enumerate(schedule(plan)):
            run = run_once(servers, subject, mode, rate, repetition, plan, work / f"{number}")
            log(
                f"figure 6: {mode.key:<18} {rate:>6,}/s {subject:<22} p50 "
                f"{run.latencies.p50_ms:6.0f} p99 {run.latencies.p99_ms:6.0f} max "
                f"{run.latencies.max_ms:6.0f} ms ({run.achieved_rate:,.0f} records/s)"
            )
            runs.append(run)
    return runs


def run_once(
    servers: str, subject: str, mode: Mode, rate: int, repetition: int, plan: LatencyPlan, at: Path
) -> LatencyRun:
    """Run one subject at ``rate`` records/s until its measured window has come out."""
    topics = Topics(input=f"in-{at.name}", output=f"out-{at.name}")
    create_topics(servers, topics.input, topics.output)
    paths = RunPaths(at)
    prepare(paths, subject, mode, topics)
    argv, environment = command(subject, paths, mode, topics, servers, at.parent)
    idle_before = settle()
    process = Subject(subject, argv, environment, paths)
    producer = PacedProducer(servers, topics.input, rate)
    try:
        producer.start()
        started = wait_until_caught_up(
            servers, topics.output, producer, timeout=START_TIMEOUT_SECONDS, alive=process.alive
        )
        first = producer.sent + round(plan.warm_up_seconds * rate)
        measured = range(first, first + round(plan.measure_seconds * rate))
        producer.stop_after(measured.stop)
        producer.join(timeout=plan.warm_up_seconds + plan.measure_seconds + 60)
        outputs = read_outputs(servers, topics.output, measured, timeout=DRAIN_SECONDS)
    except RuntimeError as error:
        raise RuntimeError(f"{error}\n{process.failure()}") from None
    finally:
        producer.abort()
        process.stop()
    if producer.sent < measured.stop or producer.failed:
        raise RuntimeError(f"the producer sent {producer.sent} of {measured.stop} records")
    return LatencyRun(
        subject=subject,
        mode=mode,
        rate=rate,
        repetition=repetition,
        latencies=measured_latencies(outputs, measured),
        achieved_rate=achieved_rate(producer.sent_at[measured.start : measured.stop]),
        started=started,
        idle_before=idle_before,
    )
