"""Figure 2, start-up: from the Run request to RUNNING and to the first committed micro-batch.

streamjobs runs the rate -> parquet example through a server (``POST /api/v1/jobs/{job}/run``;
its supervisor, woken by the request, starts ``spark-submit`` under the wrapper); the baseline is
the bare ``spark-submit`` of the same runner with the same Spark settings (``bench.rate_pipeline``).
Both are timed to the modification time of ``commits/0`` in the query's checkpoint, from a fresh
checkpoint each time; the sessions are ``bench.rate_sessions``' (figure 3 reads the same ones).
Target: streamjobs' median at most 10 % above the bare one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from bench import rate_sessions
from bench.rate_pipeline import OUTPUT, SMALL, TRIGGER
from bench.rate_sessions import BARE, STREAMJOBS, Measured, Session
from bench.results import Comparison, FigureResult, Target

TARGET = Target(1.10, at_least=False)
LABELS = {STREAMJOBS: "(a) streamjobs", BARE: "(b) bare spark-submit"}

SessionValue = Callable[[Session], float]

PHASES: tuple[tuple[str, SessionValue], ...] = (
    ("Run request -> spark-submit started", lambda s: s.submitted_at - s.started_at),
    ("spark-submit -> Spark session up (a: RUNNING)", lambda s: s.ready_at - s.submitted_at),
    ("-> commits/0 written", lambda s: s.first_commit.at - s.ready_at),
    ("total: first committed micro-batch", lambda s: s.first_batch_seconds),
)

log = functools.partial(print, flush=True)


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry: the sessions (shared with figure 3) written up as figure 2."""
    return figure_result(rate_sessions.measured(quick, work.parent / "rate-sessions", log=log))


def figure_result(measured: Measured) -> FigureResult:
    return FigureResult(
        number=2,
        slug="startup",
        title="Start-up: Run → RUNNING → first committed micro-batch (rate → Parquet)",
        comparisons=[first_batch_comparison(measured), ready_comparison(measured)],
        method=method(measured),
        details=details(measured),
        notes=notes(measured),
    )


def first_batch_comparison(measured: Measured) -> Comparison:
    return Comparison(
        name="Run → first committed batch",
        metric="s",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BARE],
        candidate=measured.samples(STREAMJOBS, lambda s: s.first_batch_seconds),
        baseline=measured.samples(BARE, lambda s: s.first_batch_seconds),
        target=TARGET,
    )


def ready_comparison(measured: Measured) -> Comparison:
    """RUNNING against the moment the bare driver's Spark session is up: what RUNNING waits for."""
    return Comparison(
        name="Run → RUNNING (bare: session up)",
        metric="s",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BARE],
        candidate=measured.samples(STREAMJOBS, lambda s: s.ready_seconds),
        baseline=measured.samples(BARE, lambda s: s.ready_seconds),
    )


def method(measured: Measured) -> str:
    return f"""\
**Pipeline.** `examples/rate-to-parquet.yaml`: Spark's rate source (10 rows/s) → `SELECT
timestamp, value, value % 10 AS last_digit FROM ticks WHERE value % 2 = 0` → Parquet, with
`triggerMode: ProcessingTime`, `triggerDuration: {TRIGGER}`, its output and checkpoint in the
bench's scratch directory, a fresh checkpoint every time, driver node type `small`
(`local[{SMALL.cores}]`, `--driver-memory {SMALL.memory_mb}m`).

**Subjects.** (a) streamjobs: a `streamjobs server` (SQLite store, supervisor tick 1 s) up
before the first session and throughout; the job is PUT, then `POST /api/v1/jobs/<job>/run`
starts the clock. Its supervisor starts `spark-submit <runner> --manifest job.yaml
--application-id … --stop-file … --report-url … --report-token-file …` under the wrapper, in
its sandbox (bubblewrap, as the job's runAs account: isolation is on, as in every server), at
once (the Run request wakes its loop); the runner reports to the server over HTTP. (b) bare:
the `spark-submit` command the launcher builds for the same job
(`streamjobs.launch.command.spark_submit_command`, so the same `--master`, `--driver-memory`,
`--conf`s and environment), with `--manifest job.yaml` as the runner's only argument: no
server, no wrapper, no reporting. The clock starts just before the process is started.

**Clock.** Both stop on the modification time of `<checkpoint>/{OUTPUT}/commits/0`, the file
Spark writes when micro-batch 0 is committed (the harness polls for it every 50 ms; the file's
time does not depend on the polling). RUNNING is the first attempt's `runningAt` from the API,
read after the commit so the harness does not poll the server meanwhile; the server marks it at
the supervisor tick that the driver's first report wakes (its Spark session is up; the server
does not ask a reporting driver's Spark REST API while it starts). The bare counterpart is the
runner's own `driver` line on stdout, printed when the session is up.

**Repetitions.** {measured.plan.repetitions} per subject, alternating, streamjobs first (a
first run after an idle spell, with colder caches, counts against streamjobs). Each session goes
on to the SIGKILL of figure 3 once it has committed micro-batch 2; that happens after what this
figure times."""


def details(measured: Measured) -> str:
    sections = [
        "**Every session (seconds from the Run request / the process start).**\n\n"
        + sessions_table(measured),
        "**Where the time goes (medians, seconds).**\n\n" + phase_table(measured),
        "**(a) - (b).** " + gap(measured),
        "**Same Spark work.** streamjobs' command, read from the process list, differs from "
        "the bare one in: "
        + ("; ".join(f"`{d}`" for d in measured.differences) or "nothing")
        + ". (The UI port is a free port picked per driver; the runner flags are its "
        "reporting and stop file.)",
    ]
    return "\n\n".join(sections)


def sessions_table(measured: Measured) -> str:
    lines = [
        "| # | subject | ran | spark-submit | ready | first batch | load average |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for session in measured.sessions:
        lines.append(
            f"| {session.repetition + 1} | {LABELS[session.subject]} | "
            f"{'first' if session.first else 'second'} | "
            f"{session.submitted_at - session.started_at:.2f} | {session.ready_seconds:.1f} | "
            f"{session.first_batch_seconds:.1f} | {session.load_average:.1f} |"
        )
    return "\n".join(lines)


def phase_table(measured: Measured) -> str:
    lines = [f"| | {LABELS[STREAMJOBS]} | {LABELS[BARE]} |", "|---|---:|---:|"]
    for label, value in PHASES:
        cells = " | ".join(f"{measured.median(subject, value):.2f}" for subject in LABELS)
        lines.append(f"| {label} | {cells} |")
    return "\n".join(lines)


def gap(measured: Measured) -> str:
    """The difference of the medians, phase by phase, and what it means against the target."""
    parts = [
        f"{label} {measured.median(STREAMJOBS, v) - measured.median(BARE, v):+.2f} s"
        for label, v in PHASES
    ]
    bare_median = measured.median(BARE, PHASES[-1][1])
    allowed = bare_median * (TARGET.threshold - 1)
    return (
        f"{'; '.join(parts)}. The target allows (a) {allowed:.1f} s more than (b)'s median. "
        "Before spark-submit, (a) has the Run request, the supervisor tick it wakes and the "
        "wrapper's Python start; after it, the driver is the same command but for the "
        "runner's reporting (an HTTP client thread and a heartbeat), and (a)'s 'session up' "
        "is the supervisor tick the driver's first report wakes, a little after the session "
        "itself."
    )


def notes(measured: Measured) -> list[str]:
    loads = [session.load_average for session in measured.sessions]
    return [
        f"The 1-minute load average was {min(loads):.1f} to {max(loads):.1f} when the sessions "
        "started. Start-up is mostly JVM and Spark start, which a busy machine slows down: "
        "compare the paired ratios rather than the absolute seconds.",
        "The streamjobs server was up, and idle, during the bare sessions too.",
    ]
