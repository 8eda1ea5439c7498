"""Figure 1 written up: its comparisons, its method, every run, and where the time went.

"Where the time went" compares the subjects phase by phase — the micro-batch phases of Spark's
progress reports, the tasks' run, CPU and GC time from the event log — and reads the micro-batch's
physical plan for how many times each record's JSON is parsed, and how many of its fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bench.figure_throughput import MEMORY_SAMPLE_SECONDS, TARGET, Measured, Run, samples
from bench.kafka_data import RECORD_SCHEMA, LoadedTopic
from bench.results import Comparison, FigureResult, Spread
from bench.throughput_subjects import (
    BASELINE,
    LABELS,
    SQL,
    STREAMJOBS,
    SUBJECTS,
    TOPIC,
    ThroughputPlan,
)

RunValue = Callable[[Run], float]

TIME_ROWS: tuple[tuple[str, RunValue], ...] = (
    ("processing window", lambda run: run.window.seconds),
    ("of which the first micro-batch", lambda run: run.window.first_batch_seconds),
    ("process, start to exit (JVM included)", lambda run: run.process_seconds),
    ("outside the window (start-up, exit)", lambda run: run.process_seconds - run.window.seconds),
    ("addBatch (the micro-batch's Spark job)", lambda run: _phase(run, "addBatch")),
    ("latestOffset + getBatch", lambda run: _phase(run, "latestOffset", "getBatch")),
    ("queryPlanning", lambda run: _phase(run, "queryPlanning")),
    ("walCommit + commitOffsets", lambda run: _phase(run, "walCommit", "commitOffsets")),
    ("Spark jobs, wall", lambda run: run.tasks.job_seconds),
    ("tasks, executor run time (both cores)", lambda run: run.tasks.run_seconds),
    ("tasks, CPU time", lambda run: run.tasks.cpu_seconds),
    ("of which in stages of one task per partition", lambda run: _narrow_cpu(run)),
    ("of which in other stages (sink bookkeeping)", lambda run: _wide_cpu(run)),
    ("tasks, GC time", lambda run: run.tasks.gc_seconds),
    ("Python process CPU (not its JVM)", lambda run: run.python_cpu_seconds),
)
GAP_ROWS = (*TIME_ROWS[4:8], *TIME_ROWS[10:13], TIME_ROWS[14])
"""The phases that explain a difference between the windows."""


def figure_result(measured: Measured) -> FigureResult:
    plan, runs = measured.plan, measured.runs
    comparisons = [
        *(throughput_comparison(sink, runs) for sink in plan.formats),
        *(cpu_comparison(sink, runs) for sink in plan.formats),
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


def throughput_comparison(sink: str, runs: list[Run]) -> Comparison:
    """Records/s over the processing window: what the target is about."""
    return Comparison(
        name=f"Kafka JSON → {sink.capitalize()}",
        metric="records/s",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BASELINE],
        candidate=samples(runs, sink, STREAMJOBS, lambda run: run.records_per_second),
        baseline=samples(runs, sink, BASELINE, lambda run: run.records_per_second),
        target=TARGET,
    )


def cpu_comparison(sink: str, runs: list[Run]) -> Comparison:
    """Records per second of task CPU time: less sensitive than wall time to a busy machine."""
    return Comparison(
        name=f"{sink.capitalize()}, per task-CPU-second",
        metric="records per task-CPU-s",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BASELINE],
        candidate=samples(runs, sink, STREAMJOBS, lambda run: run.records_per_cpu_second),
        baseline=samples(runs, sink, BASELINE, lambda run: run.records_per_cpu_second),
    )


def method(plan: ThroughputPlan, topic: LoadedTopic, rows: int, warm_up: float) -> str:
    repetitions = ", ".join(f"{sink} {count}" for sink, count in plan.sinks)
    return f"""\
**Data.** Topic `{TOPIC}`, {plan.partitions} partitions, {topic.records:,} keyed JSON records of
{topic.mean_record_bytes:.0f} bytes (7 fields: id, user, amount, currency, country, ts, note),
produced once before any run (in {topic.seconds:.1f} s) by `bench/kafka_data.py` and written
back to disk (`sync`) so that the first run does not share the machine with that writeback. Then
(b) runs once on {plan.formats[0]}, not measured ({warm_up:,.0f} records/s), which also reads the
whole topic through the broker once: in earlier reports the first timed run was often the slowest
of the figure, and the first timed run was always (a)'s. Every run reads the whole topic from
`earliest`.

**Query.** `{SQL}` over the records parsed with `{RECORD_SCHEMA}`; it keeps {rows:,} rows. After
the runs, Spark counted every run's output: each held exactly those rows.

**Subjects.** (a) `python -m streamjobs.runner --manifest job.yaml --connections connections.yaml
--master {plan.master} --until-idle`: a `kafkajson` input, one SQL step, a `path:` output,
`triggerMode: AvailableNow`, `guarantee: EXACTLY_ONCE`, inside the sandbox a server gives its
drivers (bubblewrap; as root, the runAs account `bench`: `bench/sandboxed_runner.py`).
(b) `bench/baseline_kafka_to_parquet.py`:
`readStream.format("kafka")` → `from_json` → the same SQL on a temp view →
`writeStream.format(...)` with `trigger(availableNow=True)`. Both run in their own process and JVM
on `{plan.master}` with `maxOffsetsPerTrigger` {plan.max_offsets_per_trigger:,}, a checkpoint, and
the same Spark settings: the baseline is handed the settings streamjobs derives for the job
(connector jars, console progress off, the harness's event log...). Repetitions: {repetitions};
the (a)/(b) order alternates from one pair of runs to the next. Before each run the harness
syncs the last run's files to disk and waits (5 s at most) until the CPUs were 90 % idle for half
a second (`bench/settle.py`), so that one run's writeback is not the next one's noise. While each
runs, the harness samples its process tree's memory every {MEMORY_SAMPLE_SECONDS * 1000:.0f} ms
for figure 5 (about 1.4 % of one core, alike for both subjects).

**Throughput** = records read / processing window. The window runs from the start of the first
micro-batch to the end of the last (`timestamp` + `durationMs.triggerExecution` of Spark's
progress reports, which the runner prints as it goes and the baseline prints from
`query.recentProgress` at its end), so both are timed by the same clock in the same way. JVM and
session start-up, the query's start and the process's exit are outside it; the whole process time
is in the table below. Per core = throughput / {plan.cores} (`{plan.master}`). Records per
task-CPU-second (the event log's executor CPU time) is given as well: it depends much less than
wall time on what else the machine is doing."""


def details(plan: ThroughputPlan, runs: list[Run]) -> str:
    sections = [
        "**Per core (median).** " + per_core(plan, runs),
        "**Every run.**\n\n" + runs_table(runs),
        "**Where the time goes (medians, seconds).**\n\n" + time_table(plan, runs),
        "**JSON parsing in the micro-batch plan.** " + parsing(plan, runs),
        *(gap(sink, runs) for sink in plan.formats),
    ]
    return "\n\n".join(sections)


def per_core(plan: ThroughputPlan, runs: list[Run]) -> str:
    parts = [
        f"{sink} {LABELS[subject]}: "
        f"{_median(runs, sink, subject, lambda run: run.records_per_second) / plan.cores:,.0f}"
        for sink in plan.formats
        for subject in SUBJECTS
    ]
    return "; ".join(parts) + " records/s per core."


def runs_table(runs: list[Run]) -> str:
    lines = [
        "| sink | # | subject | ran | records/s | window s | first batch s | batches "
        "| process s | records per task-CPU-s | CPU idle before | load average |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        lines.append(
            f"| {run.sink} | {run.repetition + 1} | {LABELS[run.subject]} | "
            f"{'first' if run.first else 'second'} | {run.records_per_second:,.0f} | "
            f"{run.window.seconds:.1f} | {run.window.first_batch_seconds:.1f} | "
            f"{run.window.batches} | {run.process_seconds:.1f} | "
            f"{run.records_per_cpu_second:,.0f} | {run.idle_before:.0%} | "
            f"{run.load_average:.1f} |"
        )
    return "\n".join(lines)


def time_table(plan: ThroughputPlan, runs: list[Run]) -> str:
    """Seconds per phase, median over repetitions, each sink and subject side by side."""
    columns = [(sink, subject) for sink in plan.formats for subject in SUBJECTS]
    header = " | ".join(f"{sink} {LABELS[subject]}" for sink, subject in columns)
    lines = [f"| | {header} |", "|---|" + "---:|" * len(columns)]
    for label, value in TIME_ROWS:
        cells = " | ".join(f"{_median(runs, sink, s, value):.1f}" for sink, s in columns)
        lines.append(f"| {label} | {cells} |")
    return "\n".join(lines)


def parsing(plan: ThroughputPlan, runs: list[Run]) -> str:
    """How many ``from_json`` calls each subject's first micro-batch plan makes, over how many
    fields: a parse that the optimizer duplicates (a filter pushed below the projection) or
    cannot prune costs CPU for every record."""
    parts = []
    for sink in plan.formats:
        for subject in SUBJECTS:
            run = next(r for r in runs if r.sink == sink and r.subject == subject)
            calls, fields = json_parses(run.tasks.batch_plan)
            parts.append(f"{sink} {LABELS[subject]}: {calls} calls over {fields} fields")
    return (
        "; ".join(parts) + ". (Each call parses the whole value; the fields are those its "
        "schema keeps. Calls in a filter run for every record, those in the projection for "
        "the records kept.)"
    )


def json_parses(plan: str) -> tuple[int, int]:
    """(``from_json`` calls, fields parsed by them) in a physical plan's node details."""
    details = plan.split("\n\n", 1)[-1]  # the node list, not the tree drawing above it
    calls = details.split("from_json(")[1:]
    fields = sum(len(re.findall(r"StructField\(", call.split(" as string)")[0])) for call in calls)
    return len(calls), fields


def gap(sink: str, runs: list[Run]) -> str:
    """Which phases make up the difference between the subjects' median windows."""

    def median(subject: str, value: RunValue) -> float:
        return _median(runs, sink, subject, value)

    window = TIME_ROWS[0][1]
    difference = median(STREAMJOBS, window) - median(BASELINE, window)
    parts = [
        f"{label} {median(STREAMJOBS, value) - median(BASELINE, value):+.1f} s"
        for label, value in GAP_ROWS
    ]
    return (
        f"**{sink.capitalize()}: (a) - (b).** Window {difference:+.1f} s (median against "
        f"median); by phase: {', '.join(parts)}."
    )


def notes(plan: ThroughputPlan, runs: list[Run]) -> list[str]:
    loads = [run.load_average for run in runs]
    found = [
        f"The 1-minute load average was {min(loads):.1f} to {max(loads):.1f} when the runs "
        f"started, on {plan.cores} cores. Above {plan.cores}, other processes competed for the "
        "CPU and the wall-time figures carry their noise; the per-task-CPU-second figures "
        "much less so."
    ]
    single = [sink for sink, count in plan.sinks if count == 1]
    if single and any(count > 1 for _, count in plan.sinks):
        found.append(
            f"{', '.join(single)}: one repetition each, to keep the full run near 15 minutes."
        )
    return found


def _narrow_cpu(run: Run) -> float:
    """Task CPU in stages with one task per topic partition: reading, parsing, writing."""
    return run.tasks.cpu_seconds_by_stage_width[run.partitions]


def _wide_cpu(run: Run) -> float:
    return run.tasks.cpu_seconds - _narrow_cpu(run)


def _phase(run: Run, *names: str) -> float:
    return sum(run.window.phases_ms[name] for name in names) / 1000


def _median(runs: list[Run], sink: str, subject: str, value: RunValue) -> float:
    return Spread.of(samples(runs, sink, subject, value)).median
