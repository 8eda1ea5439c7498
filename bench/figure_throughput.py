"""Figure 1, pipeline throughput: Kafka JSON -> filter/project SQL -> Parquet (and Delta).

The same query runs (a) through streamjobs — ``python -m streamjobs.runner --manifest job.yaml
--connections connections.yaml --master local[2] --until-idle``, what ``spark-submit`` runs for a
pipeline job — and (b) as the hand-written PySpark script ``bench/baseline_kafka_to_parquet.py``.
Both are child processes with their own JVM, on ``local[2]``, with the AvailableNow trigger, the
same ``maxOffsetsPerTrigger`` and the same Spark settings: the baseline is handed exactly the
settings streamjobs derives for the job (``streamjobs.domain.spark_conf.session_conf``), so
connector jars, event logging and the rest cannot differ. Both read the same pre-loaded topic from
its start; their order alternates from one pair of runs to the next.

Throughput is the records read divided by the processing window (``bench.progress``): from the
start of the first micro-batch to the end of the last, by Spark's progress reports. The process's
whole life is timed too, and the Spark event log says how the window's time was spent;
``bench.throughput_report`` turns the runs into the figure. The memory of every run's process tree
is sampled as it runs (``bench.rss``), for figure 5, so that figure needs no runs of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import kafka_data
from bench.eventlog import TaskTime, read_event_log
from bench.output_reader import shared_reader
from bench.progress import ProcessingWindow, processing_window, read_progress
from bench.results import Target
from bench.rss import TreeMemory, run_sampled
from bench.sandboxed_runner import sandboxed
from bench.settle import settle
from bench.shared_measurements import SharedMeasurements
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
"""The directory, beside the figures' own, where the runs figures 1 and 5 share are made."""
SELECTED_CURRENCIES = frozenset({"EUR", "USD", "GBP"})
TARGET = Target(0.97)
WARM_UP = -1
"""The repetition number of the unmeasured run before the timed ones."""
MEMORY_SAMPLE_SECONDS = 0.25
"""How often a run's memory is sampled. Each sample scans the process table and reads every
watched process's status: measured during a full run, the harness used 1.4 % of one core, the
same for both subjects. The kernel's high-water mark is read too, for what sampling misses."""

Log = Callable[[str], None]


QUICK = ThroughputPlan(records=100_000, max_offsets_per_trigger=50_000, sinks=(("parquet", 1),))
FULL = ThroughputPlan(
    records=2_000_000, max_offsets_per_trigger=250_000, sinks=(("parquet", 3), ("delta", 2))
)
"""Delta gets two repetitions: a pair of Delta runs takes over two minutes on 2 cores, and a third
would take the full run past its 20 minutes."""


@dataclass(frozen=True)
class Run:
    """One subject's run over the whole topic."""

    subject: str
    sink: str
    repetition: int
    first: bool
    window: ProcessingWindow
    process_seconds: float
    python_cpu_seconds: float
    """CPU time of the subject's Python process (the driver's Python side, not its JVM)."""
    tasks: TaskTime
    memory: TreeMemory
    """The RSS of the run's process tree over its life (figure 5)."""
    load_average: float
    idle_before: float
    """The CPUs' idle share just before the run, once the machine had settled (``bench.settle``)."""
    paths: RunPaths
    partitions: int
    """The topic's partitions: the micro-batch's own stage runs one task for each."""

    @property
    def records_per_second(self) -> float:
        return self.window.records_per_second

    @property
    def records_per_cpu_second(self) -> float:
        cpu = self.tasks.cpu_seconds
        return self.window.records / cpu if cpu else 0.0


@dataclass(frozen=True)
class Measured:
    """Everything figure 1 measured."""

    plan: ThroughputPlan
    topic: kafka_data.LoadedTopic
    runs: list[Run]
    rows: int
    """Rows the query keeps, which every run's output was checked to hold."""
    warm_up: float
    """Records/s of the unmeasured run of (b) before the timed ones."""


def measured(quick: bool, work: Path, log: Log = print) -> Measured:
    """The runs of this plan in ``work``, made on the first call and kept for the next (figure 5
    reads the memory of figure 1's runs)."""
    return _RUNS.get(QUICK if quick else FULL, work, log)


def run_figure(plan: ThroughputPlan, work: Path, log: Log = print) -> Measured:
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


_RUNS = SharedMeasurements("figure 1", run_figure)


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
    load_average = _load_average()
    memory, finished = run_sampled(
        subject,
        command,
        directory=paths.directory,
        environment=environment,
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
        python_cpu_seconds=finished.child_cpu_seconds,
        tasks=read_event_log(paths.event_log),
        memory=memory,
        load_average=load_average,
        idle_before=idle_before,
        paths=paths,
        partitions=plan.partitions,
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


def _load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")
