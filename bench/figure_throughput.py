"""Figures 1 (throughput) and 5 (memory), written up from the runs ``throughput_runs`` makes
(one bench run's runs serve both figures)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench import kafka_data
from bench.report import table
from bench.results import Comparison, FigureResult, Spread, Target
from bench.rss import JVM, PYTHON
from bench.throughput_runs import (
    FULL,
    MEMORY_SAMPLE_SECONDS,
    QUICK,
    RUNS,
    Measured,
    Run,
    per_cpu,
    rate,
    run_figure,
)
from bench.throughput_subjects import (
    BASELINE,
    LABELS,
    SQL,
    STREAMJOBS,
    SUBJECTS,
    TOPIC,
    ThroughputPlan,
)

TARGET = Target(0.97)


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
