"""Figure 5, memory of one pipeline driver: peak RSS of its JVM and of its Python process.

The subjects and the data are figure 1's (``bench.figure_throughput``): Kafka JSON -> filter /
project SQL -> Parquet, run (a) by streamjobs' runner (``python -m streamjobs.runner --manifest
... --until-idle``, what ``spark-submit`` runs for the job) and (b) by the hand-written PySpark
script ``bench/baseline_kafka_to_parquet.py`` with the same Spark settings, each in its own
process and JVM on ``local[2]`` with the AvailableNow trigger over the whole pre-loaded topic,
the order alternating between repetitions. ``bench.rss`` samples the RSS of each subject's
process tree every 100 ms, the JVM and the Python process apart. There is no target: the figure
shows what streamjobs costs in memory next to the baseline.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import kafka_data
from bench.figure_throughput import (
    BASELINE,
    LABELS,
    SQL,
    STREAMJOBS,
    SUBJECTS,
    TOPIC,
    RunPaths,
    ThroughputPlan,
    baseline_command,
    schedule,
    streamjobs_command,
    write_connections,
    write_manifest,
)
from bench.progress import processing_window, read_progress
from bench.results import Comparison, FigureResult, Spread
from bench.rss import JVM, PYTHON, TreeMemory, run_sampled
from streamjobs.devtools.kafka import KafkaBroker

SINK = "parquet"
SAMPLE_SECONDS = 0.1

Log = Callable[[str], None]
log = functools.partial(print, flush=True)


@dataclass(frozen=True)
class MemoryPlan:
    records: int
    max_offsets_per_trigger: int
    repetitions: int
    partitions: int = 2
    master: str = "local[2]"

    def throughput_plan(self) -> ThroughputPlan:
        """Figure 1's plan for the same pipeline, which builds the subjects' commands."""
        return ThroughputPlan(
            records=self.records,
            max_offsets_per_trigger=self.max_offsets_per_trigger,
            sinks=((SINK, self.repetitions),),
            partitions=self.partitions,
            master=self.master,
        )


QUICK = MemoryPlan(records=50_000, max_offsets_per_trigger=50_000, repetitions=1)
FULL = MemoryPlan(records=500_000, max_offsets_per_trigger=250_000, repetitions=3)
"""Figure 1's micro-batch size (250,000 records), two micro-batches per run."""


@dataclass(frozen=True)
class Run:
    subject: str
    repetition: int
    first: bool
    memory: TreeMemory
    records: int
    load_average: float


@dataclass(frozen=True)
class Measured:
    plan: MemoryPlan
    topic: kafka_data.LoadedTopic
    runs: list[Run]


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry."""
    return figure_result(run_figure(QUICK if quick else FULL, work, log=log))


def run_figure(plan: MemoryPlan, work: Path, log: Log = print) -> Measured:
    work.mkdir(parents=True, exist_ok=True)
    throughput = plan.throughput_plan()
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=plan.partitions)
        log(f"figure 5: loading {plan.records:,} records into topic {TOPIC!r}")
        topic = kafka_data.load_topic(
            broker.bootstrap_servers, TOPIC, plan.records, plan.partitions
        )
        log(f"figure 5: loaded in {topic.seconds:.1f}s ({topic.mean_record_bytes:.0f} B each)")
        connections = write_connections(work, broker.bootstrap_servers)
        runs = [
            run_once(subject, repetition, first, throughput, connections, work, log)
            for _, repetition, subject, first in schedule(throughput)
        ]
    return Measured(plan=plan, topic=topic, runs=runs)


def run_once(
    subject: str,
    repetition: int,
    first: bool,
    plan: ThroughputPlan,
    connections: Path,
    work: Path,
    log: Log,
) -> Run:
    paths = RunPaths(work / f"{repetition}-{subject}")
    paths.event_log.mkdir(parents=True)
    write_manifest(paths, SINK, plan)
    command = (
        streamjobs_command(paths, connections, plan)
        if subject == STREAMJOBS
        else baseline_command(paths, SINK, connections, plan)
    )
    load_average = os.getloadavg()[0]
    memory, stdout = run_sampled(
        subject, command, directory=paths.directory, interval=SAMPLE_SECONDS
    )
    window = processing_window(read_progress(stdout))
    if window.records != plan.records:
        raise RuntimeError(f"{subject} read {window.records} records of {plan.records}")
    log(
        f"figure 5: #{repetition + 1} {subject:<10} JVM {memory.peak_mib(JVM):,.0f} MiB, "
        f"Python {memory.peak_mib(PYTHON):,.0f} MiB at their peaks ({memory.seconds:.1f} s)"
    )
    return Run(subject, repetition, first, memory, window.records, load_average)


def figure_result(measured: Measured) -> FigureResult:
    return FigureResult(
        number=5,
        slug="memory",
        title="Memory of one pipeline driver: peak RSS, Kafka JSON → SQL → Parquet",
        comparisons=[
            comparison("JVM peak RSS", measured.runs, lambda m: m.peak_mib(JVM)),
            comparison("Python peak RSS", measured.runs, lambda m: m.peak_mib(PYTHON)),
            comparison("driver peak RSS (JVM + Python)", measured.runs, _total),
        ],
        method=method(measured),
        details=details(measured),
        notes=notes(measured),
    )


def comparison(name: str, runs: list[Run], value: Callable[[TreeMemory], float]) -> Comparison:
    return Comparison(
        name=name,
        metric="MiB",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BASELINE],
        candidate=samples(runs, STREAMJOBS, value),
        baseline=samples(runs, BASELINE, value),
    )


def samples(
    runs: list[Run], subject: str, value: Callable[[TreeMemory], float]
) -> tuple[float, ...]:
    chosen = sorted((run for run in runs if run.subject == subject), key=lambda run: run.repetition)
    return tuple(value(run.memory) for run in chosen)


def method(measured: Measured) -> str:
    plan = measured.plan
    return f"""\
**Pipeline and subjects.** Figure 1's: topic `{TOPIC}`, {plan.partitions} partitions,
{measured.topic.records:,} keyed JSON records of {measured.topic.mean_record_bytes:.0f} bytes,
read from `earliest` with `maxOffsetsPerTrigger` {plan.max_offsets_per_trigger:,} and the
AvailableNow trigger; `{SQL}`; a Parquet file sink. (a) `python -m streamjobs.runner --manifest
job.yaml --connections connections.yaml --master {plan.master} --until-idle`; (b)
`bench/baseline_kafka_to_parquet.py`, given the Spark settings streamjobs derives for the job (so
the same connector jars, the same event log, Spark's default driver memory for both). Each run
reads the whole topic; {plan.repetitions} repetition(s) per subject, the order alternating.

**Memory.** Every {SAMPLE_SECONDS * 1000:.0f} ms, the RSS (psutil) of every process of the
subject's tree — its Python process, the JVM it starts through `spark-submit` (and that launcher's
short-lived shell and JVM) — summed by kind; the figure is the highest sample of the JVMs, of the
Python processes, and of both together, over the subject's whole life (start-up, the query, exit).
The kernel's own high-water mark (`VmHWM`) of the largest JVM and Python process is in the details,
as a check on what sampling may miss. RSS counts shared pages (libraries, the JDK's class data) in
full. **No target**: the figure only shows the cost next to the baseline."""


def details(measured: Measured) -> str:
    lines = [
        "| # | subject | ran | JVM peak MiB | JVM VmHWM MiB | Python peak MiB "
        "| Python VmHWM MiB | JVM + Python peak MiB | samples | process s | load average |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in measured.runs:
        memory = run.memory
        lines.append(
            f"| {run.repetition + 1} | {LABELS[run.subject]} | "
            f"{'first' if run.first else 'second'} | {memory.peak_mib(JVM):,.0f} | "
            f"{memory.high_water_mib(JVM):,.0f} | {memory.peak_mib(PYTHON):,.0f} | "
            f"{memory.high_water_mib(PYTHON):,.0f} | {_total(memory):,.0f} | "
            f"{len(memory.samples)} | {memory.seconds:.1f} | {run.load_average:.1f} |"
        )
    differences = []
    for label, value in (
        ("JVM", lambda m: m.peak_mib(JVM)),
        ("Python", lambda m: m.peak_mib(PYTHON)),
    ):
        medians = [Spread.of(samples(measured.runs, s, value)).median for s in SUBJECTS]
        differences.append(f"{label} {medians[0] - medians[1]:+,.0f} MiB")
    return (
        "**Every run.**\n\n"
        + "\n".join(lines)
        + "\n\n**(a) - (b), medians.** "
        + ", ".join(differences)
        + "."
    )


def notes(measured: Measured) -> list[str]:
    found = [
        "The ratio is shown, not judged: the issue sets no memory target for a driver.",
    ]
    if measured.plan == QUICK:
        found.append(
            f"Quick run: {measured.plan.records:,} records, one repetition — a smoke test of "
            "the harness, not the figure."
        )
    return found


def _total(memory: TreeMemory) -> float:
    """The highest sample of the JVM and the Python process together (other processes, such as
    spark-submit's shell, left out)."""
    peak = max((sample.rss[JVM] + sample.rss[PYTHON] for sample in memory.samples), default=0)
    return peak / (1024 * 1024)
