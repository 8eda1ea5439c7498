"""Figure 1's runs: Kafka JSON -> filter/project SQL -> Parquet (and Delta), streamjobs' runner
against hand-written PySpark; figure 5 reads the same runs' memory.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import kafka_data
from bench.eventlog import task_cpu_seconds
from bench.output_reader import shared_reader
from bench.processes import run_subject
from bench.progress import ProcessingWindow, processing_window, read_progress
from bench.results import Target
from bench.rss import MemorySampler, TreeMemory
from bench.sandboxed_runner import sandboxed
from bench.settle import settle
from bench.throughput_subjects import (
    BASELINE,
    STREAMJOBS,
    SUBJECTS,
    TOPIC,
    RunPaths,
    ThroughputPlan,
    baseline_command,
    shared_conf,
    streamjobs_command,
    write_connections,
    write_manifest,
)
from streamjobs.devtools.kafka import KafkaBroker

RUNS = "throughput-runs"
SELECTED_CURRENCIES = frozenset({"EUR", "USD", "GBP"})
TARGET = Target(0.97)
WARM_UP = -1
MEMORY_SAMPLE_SECONDS = 0.25

Log = Callable[[str], None]
LOG = functools.partial(print, flush=True)


QUICK = ThroughputPlan(records=100_000, max_offsets_per_trigger=50_000, sinks=(("parquet", 1),))
FULL = ThroughputPlan(
    records=2_000_000, max_offsets_per_trigger=250_000, sinks=(("parquet", 3), ("delta", 2))
)


@dataclass(frozen=True)
class Run:
    """One subject's run over the whole topic."""

    subject: str
    sink: str
    repetition: int
    first: bool
    window: ProcessingWindow
    process_seconds: float
    cpu_seconds: float
    memory: TreeMemory
    load_average: float
    idle_before: float
    paths: RunPaths

    @property
    def records_per_second(self) -> float:
        return self.window.records_per_second

    @property
    def records_per_cpu_second(self) -> float:
        return self.window.records / self.cpu_seconds if self.cpu_seconds else 0.0


@dataclass(frozen=True)
class Measured:
    """Everything figure 1 measured."""

    plan: ThroughputPlan
    topic: kafka_data.LoadedTopic
    runs: list[Run]
    rows: int
    warm_up: float


@functools.cache
def measured(quick: bool, work: Path) -> Measured:
    """The runs of this plan in ``work``, made on the first call and kept for figure 5."""
    return run_figure(QUICK if quick else FULL, work)


def run_figure(plan: ThroughputPlan, work: Path, log: Log = LOG) -> Measured:
    """Start a broker, load the topic, run both subjects on every sink, check their outputs."""
    work.mkdir(parents=True, exist_ok=True)
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=plan.partitions)
        log(f"figure 1: loading {plan.records:,} records into topic {TOPIC!r}")
        loaded = kafka_data.load_topic(
            broker.bootstrap_servers, TOPIC, plan.records, plan.partitions
        )
        log(f"figure 1: loaded in {loaded.seconds:.1f}s ({loaded.mean_record_bytes:.0f} B each)")
        os.sync()  # the topic's pages reach the disk now, not during the first timed run
        connections = write_connections(work, broker.bootstrap_servers)
        warm_up_run = run_once(
            BASELINE, plan.formats[0], WARM_UP, True, plan, connections, work, log
        )
        runs = [
            run_once(subject, sink, repetition, first, plan, connections, work, log)
            for sink, repetition, subject, first in schedule(plan)
        ]
    rows = check_outputs(plan, runs, work, log)
    return Measured(
        plan=plan, topic=loaded, runs=runs, rows=rows, warm_up=warm_up_run.records_per_second
    )


def schedule(plan: ThroughputPlan) -> Iterator[tuple[str, int, str, bool]]:
    """(sink, repetition, subject, first) in run order: the (a)/(b) order alternates by pair."""
    pair = 0
    for sink, repetitions in plan.sinks:
        for repetition in range(repetitions):
            order = SUBJECTS if pair % 2 == 0 else SUBJECTS[::-1]
            pair += 1
            for position, subject in enumerate(order):
                yield sink, repetition, subject, position == 0


def run_once(
    subject: str,
    sink: str,
    repetition: int,
    first: bool,
    plan: ThroughputPlan,
    connections: Path,
    work: Path,
    log: Log,
) -> Run:
    """Run one subject to its end and read its progress reports and event log."""
    label = "warm-up" if repetition == WARM_UP else f"#{repetition + 1}"
    paths = RunPaths(work / f"{sink}-{label.lstrip('#')}-{subject}")
    paths.event_log.mkdir(parents=True)
    write_manifest(paths, sink, plan)
    environment: dict[str, str] = {}
    if subject == STREAMJOBS:
        command, environment = sandboxed(
            streamjobs_command(paths, connections, plan), paths, data_root=work
        )
    else:
        command = baseline_command(paths, sink, connections, plan)
    idle_before = settle()
    load_average = os.getloadavg()[0]
    sampler = MemorySampler()
    finished = run_subject(
        subject,
        command,
        directory=paths.directory,
        environment=environment,
        watch=sampler,
        interval=MEMORY_SAMPLE_SECONDS,
    )
    window = processing_window(read_progress(finished.stdout))
    if window.records != plan.records:
        raise RuntimeError(f"{subject} read {window.records} records of {plan.records}")
    run = Run(
        subject=subject,
        sink=sink,
        repetition=repetition,
        first=first,
        window=window,
        process_seconds=finished.seconds,
        cpu_seconds=task_cpu_seconds(paths.event_log),
        memory=sampler.memory(),
        load_average=load_average,
        idle_before=idle_before,
        paths=paths,
    )
    log(
        f"figure 1: {sink} {label} {subject:<10} {run.records_per_second:>9,.0f} "
        f"records/s ({window.seconds:.1f}s window, {finished.seconds:.1f}s process)"
    )
    return run


def expected_rows(records: int) -> int:
    """How many of the topic's records the SQL keeps, computed from the generator itself."""
    return sum(
        1
        for number in range(records)
        if kafka_data.amount_cents(number) > 100_00
        and kafka_data.currency(number) in SELECTED_CURRENCIES
    )


def check_outputs(plan: ThroughputPlan, runs: list[Run], work: Path, log: Log) -> int:
    """Count every run's output rows with Spark; raise unless each holds exactly the expected."""
    expected = expected_rows(plan.records)
    counts: dict[str, int] = {}
    for sink in plan.formats:
        chosen = [run for run in runs if run.sink == sink]
        counts.update(count_rows(sink, [run.paths for run in chosen], work, plan.master))
    wrong = {path: rows for path, rows in counts.items() if rows != expected}
    if wrong:
        raise RuntimeError(f"outputs without the expected {expected} rows: {wrong}")
    log(f"figure 1: every output holds the expected {expected:,} rows")
    return expected


def count_rows(sink: str, runs: list[RunPaths], work: Path, master: str) -> dict[str, int]:
    """Rows in each run's output, counted by the bench's output reader with the runs' settings
    (their connector jars; not their event log)."""
    conf = shared_conf(runs[0], master)
    settings = {k: v for k, v in conf.items() if not k.startswith("spark.eventLog")}
    return shared_reader(settings, work).count(sink, [run.output for run in runs])


def samples(
    runs: list[Run], sink: str, subject: str, value: Callable[[Run], float]
) -> tuple[float, ...]:
    """``value`` of each of the subject's runs on ``sink``, in repetition order."""
    chosen = [run for run in runs if run.sink == sink and run.subject == subject]
    return tuple(value(run) for run in sorted(chosen, key=lambda run: run.repetition))
