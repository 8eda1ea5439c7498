"""Figures 1 and 5 from the same runs: Kafka JSON -> filter/project SQL -> Parquet (and Delta),
streamjobs' runner against hand-written PySpark; figure 1 written up from their throughput,
figure 5 from their drivers' memory.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import kafka_data
from bench.output_reader import count_rows
from bench.processes import log, run_subject
from bench.progress import ProcessingWindow, processing_window, task_cpu_seconds
from bench.report import table
from bench.results import Comparison, FigureResult, Spread, Target
from bench.rss import JVM, PYTHON, MemorySampler, TreeMemory
from bench.sandboxed_runner import sandboxed
from bench.settle import settle
from bench.throughput_subjects import (
    BASELINE,
    LABELS,
    SQL,
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


# The write-ups: figure 1 from the runs' throughput, figure 5 from their drivers' memory.

RunValue = Callable[[Run], float]

TIME_ROWS: tuple[tuple[str, RunValue], ...] = (
    ("processing window", lambda run: run.window.seconds),
    ("of which the first micro-batch", lambda run: run.window.first_batch_seconds),
    ("process, start to exit (JVM included)", lambda run: run.process_seconds),
    ("addBatch (the micro-batch's Spark job)", lambda run: _phase(run, "addBatch")),
    ("latestOffset + getBatch", lambda run: _phase(run, "latestOffset", "getBatch")),
    ("queryPlanning", lambda run: _phase(run, "queryPlanning")),
    ("walCommit + commitOffsets", lambda run: _phase(run, "walCommit", "commitOffsets")),
    ("tasks, CPU time", lambda run: run.cpu_seconds),
)


def _runs(quick: bool, work: Path) -> Measured:
    return run_figure(QUICK if quick else FULL, (work.parent / RUNS).resolve())


def throughput_figure(quick: bool, work: Path) -> FigureResult:
    return figure_result(_runs(quick, work))


def memory_figure(quick: bool, work: Path) -> FigureResult:
    return memory_result(_runs(quick, work))


def figure_result(measured: Measured) -> FigureResult:
    plan, runs = measured.plan, measured.runs
    comparisons = [
        comparison(f"Kafka JSON → {sink.capitalize()}", "records/s", runs, sink, rate, TARGET)
        for sink in plan.formats
    ]
    comparisons += [
        comparison(f"{sink.capitalize()}, per CPU-s", "records per task-CPU-s", runs, sink, per_cpu)
        for sink in plan.formats
    ]
    sinks = " and ".join(sink.capitalize() for sink in plan.formats)
    return FigureResult(
        number=1,
        slug="throughput",
        title=f"Pipeline throughput: Kafka JSON → filter/project SQL → {sinks}",
        comparisons=comparisons,
        method=method(plan, measured.topic, measured.rows, measured.warm_up),
        details=details(plan, runs),
        notes=notes(plan, runs),
    )


def comparison(
    name: str,
    metric: str,
    runs: list[Run],
    sink: str,
    value: RunValue,
    target: Target | None = None,
) -> Comparison:
    """(a) against (b) on ``sink``: ``value`` of their runs, in repetition order."""
    return Comparison(
        name=name,
        metric=metric,
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BASELINE],
        candidate=samples(runs, sink, STREAMJOBS, value),
        baseline=samples(runs, sink, BASELINE, value),
        target=target,
    )


def method(plan: ThroughputPlan, topic: kafka_data.LoadedTopic, rows: int, warm_up: float) -> str:
    repetitions = ", ".join(f"{sink} {count}" for sink, count in plan.sinks)
    return f"""\
**Data.** Topic `{TOPIC}`, {plan.partitions} partitions, {topic.records:,} keyed JSON records of
{topic.mean_record_bytes:.0f} bytes (7 fields: id, user, amount, currency, country, ts, note),
produced once before any run (in {topic.seconds:.1f} s) by `bench/kafka_data.py` and synced to disk,
so that its writeback does not overlap the first run. Then (b) runs once on {plan.formats[0]}, not
measured ({warm_up:,.0f} records/s), reading the whole topic through the broker once: the first
timed run, always (a)'s, used to be the slowest. Every run reads the whole topic from `earliest`.

**Query.** `{SQL}` over the records parsed with `{kafka_data.RECORD_SCHEMA}`; it keeps {rows:,}
rows. After the runs, Spark counted every run's output: each held exactly those rows.

**Subjects.** (a) `python -m streamjobs.runner --manifest job.yaml --connections connections.yaml
--master {plan.master} --until-idle`: a `kafkajson` input, one SQL step, a `path:` output,
`triggerMode: AvailableNow`, `guarantee: EXACTLY_ONCE`, inside the sandbox a server gives its
drivers (bubblewrap; as root, the runAs account `bench`: `bench/sandboxed_runner.py`). (b)
`bench/baseline_kafka_to_parquet.py`: `readStream.format("kafka")` → `from_json` → the same SQL
on a temp view → `writeStream.format(...)` with `trigger(availableNow=True)`. Both run in their
own process and JVM on `{plan.master}` with `maxOffsetsPerTrigger`
{plan.max_offsets_per_trigger:,}, a checkpoint, and the same Spark settings: the baseline is
handed those streamjobs derives for the job (connector jars, console progress off, the harness's
event log...). Repetitions: {repetitions}; the (a)/(b) order alternates from one pair of runs to
the next. Before each run the harness syncs the last run's files to disk and waits (5 s at most)
until the CPUs were 90 % idle for half a second (`bench/settle.py`). While each runs, the harness
samples its process tree's memory every {MEMORY_SAMPLE_SECONDS * 1000:.0f} ms for figure 5
(about 1.4 % of one core, alike for both subjects).

**Throughput** = records read / processing window: from the start of the first micro-batch to
the end of the last (`timestamp` + `durationMs.triggerExecution` of Spark's progress reports,
which the runner prints as it goes and the baseline from `query.recentProgress` at its end), the
same clock for both. JVM and session start-up, the query's start and the process's exit are
outside it; the whole process time is in the table below. Per core = throughput / {plan.cores}
(`{plan.master}`). Records per task-CPU-second (the event log's executor CPU time) depends much
less than wall time on what else the machine is doing."""


def details(plan: ThroughputPlan, runs: list[Run]) -> str:
    per_core = "; ".join(
        f"{sink} {LABELS[subject]}: {_median(runs, sink, subject, rate) / plan.cores:,.0f}"
        for sink in plan.formats
        for subject in SUBJECTS
    )
    every_run = [
        [
            run.sink,
            run.repetition + 1,
            LABELS[run.subject],
            _order(run),
            f"{rate(run):,.0f}",
            f"{run.window.seconds:.1f}",
            run.window.batches,
            f"{run.process_seconds:.1f}",
            f"{per_cpu(run):,.0f}",
            f"{run.idle_before:.0%}",
            f"{run.load_average:.1f}",
        ]
        for run in runs
    ]
    header = ["sink", "#", "subject", "ran", "records/s", "window s", "batches", "process s"]
    header += ["records per task-CPU-s", "CPU idle before", "load average"]
    columns = [(sink, subject) for sink in plan.formats for subject in SUBJECTS]
    phases = [
        [label, *(f"{_median(runs, sink, subject, value):.1f}" for sink, subject in columns)]
        for label, value in TIME_ROWS
    ]
    return "\n\n".join(
        [
            f"**Per core (median).** {per_core} records/s per core.",
            "**Every run.**\n\n" + table(header, every_run),
            "**Where the time goes (medians, seconds; phases from the progress reports).**\n\n"
            + table(["", *(f"{sink} {LABELS[subject]}" for sink, subject in columns)], phases),
        ]
    )


def notes(plan: ThroughputPlan, runs: list[Run]) -> list[str]:
    loads = [run.load_average for run in runs]
    return [
        f"The 1-minute load average was {min(loads):.1f} to {max(loads):.1f} when the runs "
        f"started, on {plan.cores} cores: above {plan.cores}, the wall-time figures carry the "
        "noise of other processes; the per-task-CPU-second ones much less so."
    ]


def _phase(run: Run, *names: str) -> float:
    return sum(run.window.phases_ms[name] for name in names) / 1000


def samples(runs: list[Run], sink: str, subject: str, value: RunValue) -> tuple[float, ...]:
    """``value`` of each of the subject's runs on ``sink``, in repetition order (the order they
    ran in)."""
    return tuple(value(run) for run in runs if run.sink == sink and run.subject == subject)


def _median(runs: list[Run], sink: str, subject: str, value: RunValue) -> float:
    return Spread.of(samples(runs, sink, subject, value)).median


MEMORY_SINK = "parquet"
MEMORY_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("JVM peak RSS", (JVM,)),
    ("Python peak RSS", (PYTHON,)),
    ("driver peak RSS (JVM + Python)", (JVM, PYTHON)),
)


def memory_result(measured: Measured) -> FigureResult:
    runs = [run for run in measured.runs if run.sink == MEMORY_SINK]
    comparisons = [
        comparison(name, "MiB", runs, MEMORY_SINK, lambda r, k=kinds: r.memory.peak_mib(*k))
        for name, kinds in MEMORY_ROWS
    ]
    rows = [
        [
            run.repetition + 1,
            LABELS[run.subject],
            _order(run),
            *(f"{run.memory.peak_mib(*kinds):,.0f}" for _, kinds in MEMORY_ROWS),
            f"{run.memory.high_water_mib(JVM):,.0f}",
            f"{run.memory.high_water_mib(PYTHON):,.0f}",
            len(run.memory.samples),
        ]
        for run in runs
    ]
    header = ["#", "subject", "ran", "JVM peak MiB", "Python peak MiB", "JVM + Python peak MiB"]
    header += ["JVM VmHWM MiB", "Python VmHWM MiB", "samples"]
    differences = ", ".join(f"{c.name} {c.difference:+,.0f} MiB" for c in comparisons)
    notes = ["The ratio is shown, not judged: the issue sets no memory target for a driver."]
    if measured.plan == QUICK:
        notes.append("Quick run: one repetition, a smoke test of the harness, not the figure.")
    return FigureResult(
        number=5,
        slug="memory",
        title="Memory of one pipeline driver: peak RSS, Kafka JSON → SQL → Parquet",
        comparisons=comparisons,
        method=f"""\
**Runs.** Figure 1's Parquet runs themselves ({dict(measured.plan.sinks)[MEMORY_SINK]} per
subject, the order alternating): the same pipeline, subjects, data and Spark settings, so the
same connector jars and Spark's default driver memory for both; see figure 1's method.

**Memory.** While each run went on, every {MEMORY_SAMPLE_SECONDS * 1000:.0f} ms, the RSS (psutil)
of every process of the subject's tree (its Python process, the JVM `spark-submit` starts, and
that launcher's short-lived shell and JVM), summed by kind; the figure is the highest sample of
the JVMs, of the Python processes and of both together over the subject's whole life. The
kernel's high-water mark (`VmHWM`) of the largest JVM and Python process is in the details, as a
check on what sampling misses. RSS counts shared pages in full; a fork not yet exec'd is not
counted again. **No target**: the figure shows the cost next to the baseline.""",
        details="**Every run.**\n\n"
        + table(header, rows)
        + f"\n\n**(a) - (b), medians.** {differences}.",
        notes=notes,
    )


def _order(run: Run) -> str:
    return "first" if run.first else "second"
