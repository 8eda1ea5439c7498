"""The runs that figures 1 (throughput) and 5 (memory) share: Kafka JSON -> filter/project SQL
-> Parquet (and Delta), streamjobs' runner against hand-written PySpark, each run's processing
window, CPU and drivers' memory, and the check that both wrote the same rows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import kafka_data
from bench.output_reader import count_rows
from bench.processes import log, run_subject
from bench.progress import ProcessingWindow, processing_window, task_cpu_seconds
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
WARM_UP = -1
MEMORY_SAMPLE_SECONDS = 0.25


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


def rate(run: Run) -> float:
    """Records read per second of the processing window."""
    return run.window.records_per_second


def per_cpu(run: Run) -> float:
    """Records read per second of task CPU time."""
    return run.window.records / run.cpu_seconds if run.cpu_seconds else 0.0


@dataclass(frozen=True)
class Measured:
    """Everything figure 1 measured."""

    plan: ThroughputPlan
    topic: kafka_data.LoadedTopic
    runs: list[Run]
    rows: int
    warm_up: float


@functools.cache
def run_figure(plan: ThroughputPlan, work: Path) -> Measured:
    """Start a broker, load the topic, run both subjects on every sink, check their outputs; on
    the first call, kept for figure 5."""
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
        warm_up_run = run_once(BASELINE, plan.formats[0], WARM_UP, True, plan, connections, work)
        runs = [
            run_once(subject, sink, repetition, first, plan, connections, work)
            for sink, repetition, subject, first in schedule(plan)
        ]
    rows = check_outputs(plan, runs, work)
    return Measured(plan=plan, topic=loaded, runs=runs, rows=rows, warm_up=rate(warm_up_run))


def schedule(plan: ThroughputPlan) -> Iterator[tuple[str, int, str, bool]]:
    """(sink, repetition, subject, first) in run order: the (a)/(b) order alternates by pair."""
    pairs = [(sink, repetition) for sink, count in plan.sinks for repetition in range(count)]
    for pair, (sink, repetition) in enumerate(pairs):
        for position, subject in enumerate(SUBJECTS if pair % 2 == 0 else SUBJECTS[::-1]):
            yield sink, repetition, subject, position == 0


def run_once(
    subject: str,
    sink: str,
    repetition: int,
    first: bool,
    plan: ThroughputPlan,
    connections: Path,
    work: Path,
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
    seconds = run_subject(
        subject,
        command,
        directory=paths.directory,
        environment=environment,
        watch=sampler,
        interval=MEMORY_SAMPLE_SECONDS,
    )
    window = processing_window(paths.directory / f"{subject}.out")
    if window.records != plan.records:
        raise RuntimeError(f"{subject} read {window.records} records of {plan.records}")
    log(
        f"figure 1: {sink} {label} {subject:<10} {window.records_per_second:>9,.0f} "
        f"records/s ({window.seconds:.1f}s window, {seconds:.1f}s process)"
    )
    return Run(
        subject=subject,
        sink=sink,
        repetition=repetition,
        first=first,
        window=window,
        process_seconds=seconds,
        cpu_seconds=task_cpu_seconds(paths.event_log),
        memory=sampler.memory(),
        load_average=load_average,
        idle_before=idle_before,
        paths=paths,
    )


def check_outputs(plan: ThroughputPlan, runs: list[Run], work: Path) -> int:
    """Count every run's output rows with Spark, reading with the runs' settings (their connector
    jars, not their event log); raise unless each holds exactly the rows the SQL keeps, computed
    from the generator itself."""
    expected = sum(
        1
        for number in range(plan.records)
        if kafka_data.amount_cents(number) > 100_00
        and kafka_data.currency(number) in SELECTED_CURRENCIES
    )
    counts: dict[str, int] = {}
    for sink in plan.formats:
        paths = [run.paths for run in runs if run.sink == sink]
        conf = shared_conf(paths[0], plan.master)
        reading = {k: v for k, v in conf.items() if not k.startswith("spark.eventLog")}
        counts.update(count_rows(sink, [p.output for p in paths], reading, work))
    wrong = {path: rows for path, rows in counts.items() if rows != expected}
    if wrong:
        raise RuntimeError(f"outputs without the expected {expected} rows: {wrong}")
    log(f"figure 1: every output holds the expected {expected:,} rows")
    return expected
