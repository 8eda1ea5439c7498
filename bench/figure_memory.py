"""Figure 5, memory of one pipeline driver: peak RSS of its JVM and of its Python process.

The runs are figure 1's Parquet ones (``bench.figure_throughput``): Kafka JSON -> filter /
project SQL -> Parquet, run (a) by streamjobs' runner (``python -m streamjobs.runner --manifest
... --until-idle``, what ``spark-submit`` runs for the job) and (b) by the hand-written PySpark
script ``bench/baseline_kafka_to_parquet.py`` with the same Spark settings, each in its own
process and JVM on ``local[2]`` with the AvailableNow trigger over the whole pre-loaded topic,
the order alternating between repetitions. While each ran, ``bench.rss`` sampled the RSS of its
process tree, the JVM and the Python process apart. There is no target: the figure shows what
streamjobs costs in memory next to the baseline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from bench import figure_throughput
from bench.figure_throughput import MEMORY_SAMPLE_SECONDS, QUICK, RUNS, Measured, Run
from bench.results import Comparison, FigureResult, Spread
from bench.rss import JVM, PYTHON, TreeMemory
from bench.throughput_subjects import BASELINE, LABELS, SQL, STREAMJOBS, SUBJECTS, TOPIC

SINK = "parquet"

log = functools.partial(print, flush=True)


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry: the memory of figure 1's runs (made here if figure 1 did not run)."""
    return figure_result(figure_throughput.measured(quick, work.parent / RUNS, log=log))


def parquet_runs(measured: Measured) -> list[Run]:
    return [run for run in measured.runs if run.sink == SINK]


def figure_result(measured: Measured) -> FigureResult:
    runs = parquet_runs(measured)
    return FigureResult(
        number=5,
        slug="memory",
        title="Memory of one pipeline driver: peak RSS, Kafka JSON → SQL → Parquet",
        comparisons=[
            comparison("JVM peak RSS", runs, lambda m: m.peak_mib(JVM)),
            comparison("Python peak RSS", runs, lambda m: m.peak_mib(PYTHON)),
            comparison("driver peak RSS (JVM + Python)", runs, _total),
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
    repetitions = dict(plan.sinks)[SINK]
    return f"""\
**Pipeline and subjects.** Figure 1's Parquet runs themselves: topic `{TOPIC}`,
{plan.partitions} partitions, {measured.topic.records:,} keyed JSON records of
{measured.topic.mean_record_bytes:.0f} bytes, read from `earliest` with `maxOffsetsPerTrigger`
{plan.max_offsets_per_trigger:,} and the AvailableNow trigger; `{SQL}`; a Parquet file sink. (a)
`python -m streamjobs.runner --manifest job.yaml --connections connections.yaml --master
{plan.master} --until-idle`; (b) `bench/baseline_kafka_to_parquet.py`, given the Spark settings
streamjobs derives for the job (so the same connector jars, the same event log, Spark's default
driver memory for both). Each run reads the whole topic; {repetitions} repetition(s) per subject,
the order alternating.

**Memory.** While each run went on, every {MEMORY_SAMPLE_SECONDS * 1000:.0f} ms, the RSS (psutil)
of every process of the subject's tree — its Python process, the JVM it starts through
`spark-submit` (and that launcher's short-lived shell and JVM) — summed by kind; the figure is the
highest sample of the JVMs, of the Python processes, and of both together, over the subject's
whole life (start-up, the query, exit). The kernel's own high-water mark (`VmHWM`) of the largest
JVM and Python process is in the details, as a check on what sampling may miss. RSS counts shared
pages (libraries, the JDK's class data) in full; a fork that has not yet exec'd (a JVM starting a
program) shares all its parent's pages and is not counted again. **No target**: the figure only
shows the cost next to the baseline."""


def details(measured: Measured) -> str:
    lines = [
        "| # | subject | ran | JVM peak MiB | JVM VmHWM MiB | Python peak MiB "
        "| Python VmHWM MiB | JVM + Python peak MiB | samples | process s | load average |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in parquet_runs(measured):
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
        runs = parquet_runs(measured)
        medians = [Spread.of(samples(runs, s, value)).median for s in SUBJECTS]
        differences.append(f"{label} {medians[0] - medians[1]:+,.0f} MiB")
    return (
        "**Every run.**\n\n"
        + "\n".join(lines)
        + "\n\n**(a) - (b), medians.** "
        + ", ".join(differences)
        + ".\n\n**What each run's JVM peak was made of** (the processes of its highest JVM "
        "sample, MiB):\n\n" + "\n".join(jvm_peak_lines(parquet_runs(measured)))
    )


def jvm_peak_lines(runs: list[Run]) -> list[str]:
    """One bullet per run: when its JVM peak came and each JVM in it (pid, main class, RSS)."""
    lines = []
    for run in runs:
        peak = run.memory.peak_sample(JVM)
        if peak is None:
            continue
        jvms = [p for p in peak.processes if p.kind == JVM]
        parts = " + ".join(f"{p.label} (pid {p.pid}) {p.rss / (1024 * 1024):,.0f}" for p in jvms)
        lines.append(
            f"- #{run.repetition + 1} {LABELS[run.subject]}: at {peak.at:.1f} s of "
            f"{run.memory.seconds:.1f} s: {parts or 'none'}"
        )
    return lines


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
