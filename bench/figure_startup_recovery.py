"""Figures 2 (start-up) and 3 (recovery), written up from the sessions ``rate_sessions`` runs
(one bench run's sessions serve both figures)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import astuple
from pathlib import Path

from bench.rate_pipeline import OUTPUT, SMALL, TRIGGER
from bench.rate_sessions import (
    BARE,
    FULL_REPETITIONS,
    KILL_AFTER_BATCH,
    QUICK_REPETITIONS,
    RESTART_POLICY,
    STANDBY,
    STREAMJOBS,
    Measured,
    Session,
    measure,
)
from bench.report import table
from bench.results import Comparison, FigureResult, Spread, Target

STARTUP_TARGET = Target(1.10, at_least=False)
RECOVERY_TARGET = Target(1.0, at_least=False, difference=True)
STANDBY_TARGET = Target(0.35, at_least=False)
LABELS = {
    STREAMJOBS: "(a) streamjobs",
    STANDBY: "(c) streamjobs with standby",
    BARE: "(b) bare spark-submit",
}
RECOVERY_LABELS = {**LABELS, STREAMJOBS: "(a) streamjobs, Always", BARE: "(b) bare cold restart"}


def _sessions(quick: bool, work: Path) -> Measured:
    repetitions = QUICK_REPETITIONS if quick else FULL_REPETITIONS
    return measure(repetitions, (work.parent / "rate-sessions").resolve())


def startup_figure(quick: bool, work: Path) -> FigureResult:
    return startup_result(_sessions(quick, work))


def recovery_figure(quick: bool, work: Path) -> FigureResult:
    return recovery_result(_sessions(quick, work))


def comparison(
    measured: Measured,
    name: str,
    subject: str,
    value: Callable[[Session], float],
    target: Target | None = None,
    labels: dict[str, str] = LABELS,
) -> Comparison:
    """``subject`` against bare: ``value`` of their sessions, in repetition order."""
    return Comparison(
        name=name,
        metric="s",
        candidate_label=labels[subject],
        baseline_label=labels[BARE],
        candidate=measured.samples(subject, value),
        baseline=measured.samples(BARE, value),
        target=target,
    )


def startup_result(measured: Measured) -> FigureResult:
    first, ready = (lambda s: s.first_batch_seconds), (lambda s: s.ready_seconds)
    name = "Run → first committed batch"
    comparisons = [
        comparison(measured, name, STREAMJOBS, first, STARTUP_TARGET),
        comparison(measured, "Run → RUNNING (bare: session up)", STREAMJOBS, ready),
        comparison(measured, f"with standby: {name}", STANDBY, first),
    ]
    allowed = comparisons[0].baseline_spread.median * (STARTUP_TARGET.threshold - 1)
    differences = "; ".join(f"`{d}`" for d in measured.differences) or "nothing"
    return FigureResult(
        number=2,
        slug="startup",
        title="Start-up: Run → RUNNING → first committed micro-batch (rate → Parquet)",
        comparisons=comparisons,
        method=STARTUP_METHOD.format(
            trigger=TRIGGER,
            cores=SMALL.cores,
            memory=SMALL.memory_mb,
            output=OUTPUT,
            repetitions=measured.repetitions,
        ),
        details="\n\n".join(
            [
                "**Every session (seconds).**\n\n" + sessions_table(measured),
                f"**(a) - (b).** The target allows (a) {allowed:.1f} s more than (b)'s median.",
                "**Same Spark work.** streamjobs' command, read from the process list, differs "
                f"from the bare one in: {differences}. (The UI port is a free port picked per "
                "driver; the runner flags are its reporting and stop file.)",
            ]
        ),
        notes=[load_note(measured, "Start-up")],
    )


def recovery_result(measured: Measured) -> FigureResult:
    recovery, name = (lambda s: s.recovery_seconds), "SIGKILL → next committed batch"
    comparisons = [
        comparison(measured, name, STREAMJOBS, recovery, RECOVERY_TARGET, RECOVERY_LABELS),
        comparison(
            measured, f"with standby: {name}", STANDBY, recovery, STANDBY_TARGET, RECOVERY_LABELS
        ),
    ]
    pairs = zip(comparisons[0].candidate, comparisons[0].baseline, strict=True)
    paired = Spread.of([candidate - baseline for candidate, baseline in pairs])
    return FigureResult(
        number=3,
        slug="recovery",
        title="Recovery after a SIGKILL of the active driver",
        comparisons=comparisons,
        method=RECOVERY_METHOD.format(
            batch=KILL_AFTER_BATCH,
            interval=RESTART_POLICY["onFailureRetryInterval"],
            output=OUTPUT,
            repetitions=measured.repetitions,
        ),
        details="\n\n".join(
            [
                f"**(a) - (b).** {comparisons[0].difference:+.2f} s between the medians (paired "
                f"{paired.low:+.2f} to {paired.high:+.2f} s); the target allows "
                f"+{RECOVERY_TARGET.threshold:g} s.",
                "**Every session (seconds; batches are ids).**\n\n" + sessions_table(measured),
                "**Records in the outputs.**\n\n" + records_table(measured),
            ]
        ),
        notes=[records_verdict(measured), load_note(measured, "Recovery")],
    )


STARTUP_METHOD = """\
**Pipeline.** `examples/rate-to-parquet.yaml`: Spark's rate source (10 rows/s) → `SELECT
timestamp, value, value % 10 AS last_digit FROM ticks WHERE value % 2 = 0` → Parquet, with a
`ProcessingTime` trigger of {trigger}, output and checkpoint in the scratch directory, a fresh
checkpoint every session, driver node type `small` (`local[{cores}]`, `--driver-memory {memory}m`).

**Subjects.** (a) streamjobs: a `streamjobs server` (SQLite store) up throughout; the job is
PUT, then `POST /api/v1/jobs/<job>/run` starts the clock; its supervisor, woken by the request,
starts `spark-submit <runner> --manifest job.yaml --application-id … --stop-file … --report-url …`
under the wrapper, in its sandbox. (c) the same job with `spec.instance: {{standby: true}}`:
the supervisor also starts a standby driver, held ready. (b) bare: the `spark-submit` the
launcher builds for the same job (`spark_submit_command`: the same `--master`, `--driver-memory`,
`--conf`s and environment) with `--manifest job.yaml` only: no server, wrapper or reporting; the
clock starts just before the process.

**Clock.** All stop on the modification time of `<checkpoint>/{output}/commits/0`, written when
micro-batch 0 is committed (polled every 50 ms; the file's time does not depend on it). RUNNING
is the first attempt's `runningAt` from the API, read afterwards; the bare counterpart is the
runner's own `driver` line on stdout, printed once its session is up.

**Repetitions.** {repetitions} per subject; the order of the subjects reverses every repetition,
streamjobs first. Each session goes on to figure 3's SIGKILL after what this figure times."""

RECOVERY_METHOD = """\
**Sessions.** Figure 2's (each from a fresh checkpoint). Once micro-batch {batch} is committed,
the active driver is SIGKILLed; the last batch id in `commits/` once the killed processes are
gone is the last committed before the kill.

**Subjects.** (a) streamjobs with `restartPolicy: {{type: Always, onFailureRetryInterval:
{interval}}}`: SIGKILL to the JVM and Python under the attempt's wrapper (the wrapper records
exit code 137; the supervisor, woken by its exit, submits the next attempt at once, whose driver
starts during the {interval} s interval and holds its queries until it has passed). (c) the same
with `spec.instance: {{standby: true}}`: before the kill the harness polls
`GET /api/v1/applications/<id>` until its `standby.state` is `ready`; the SIGKILL goes to the
active driver (the wrapper whose process tree does not hold `standby.pid`), and the supervisor
promotes the standby. (b) bare: SIGKILL to the `spark-submit`'s process group and, as soon as the
killed JVM has exited, the same command again (a cold restart from the same checkpoint, as a
shell loop would do it).

**Clock.** From just before the SIGKILL to the modification time of the first
`<checkpoint>/{output}/commits/<id>` above the last committed before the kill: the batch the
killed driver had planned, re-run with the same offsets.

**Targets.** (a): its median ≤ (b)'s + 1 s, a bound on the difference
(`Target(1.0, at_least=False, difference=True)`); the ratio is shown for reference. (c): its
median ≤ 0.35 x (b)'s. 'paired' verdicts compare each repetition's own pair with the bound.

**Records.** After the sessions one Spark process reads every output through its
`_spark_metadata` log (committed files only): each even value from 0 to the highest written must
be there exactly once; lost (missing below the highest) and duplicated must both be zero.
({repetitions} session(s) per subject.)"""


def sessions_table(measured: Measured) -> str:
    header = ["#", "subject", "ran", "RUNNING", "first batch", "killed after batch"]
    header += ["next batch", "SIGKILL -> next batch", "load average"]
    rows = [
        [
            session.repetition + 1,
            LABELS[session.subject],
            session.position + 1,
            f"{session.ready_seconds:.2f}",
            f"{session.first_batch_seconds:.2f}",
            session.killed_batch,
            session.recovered.batch,
            f"{session.recovery_seconds:.2f}",
            f"{session.load_average:.1f}",
        ]
        for session in measured.sessions
    ]
    return table(header, rows)


def records_table(measured: Measured) -> str:
    header = ["#", "subject", "rows", "distinct", "highest", "lost", "duplicated", "unexpected"]
    rows = [
        (session.repetition + 1, RECOVERY_LABELS[session.subject], *astuple(check))
        for session in measured.sessions
        if (check := session.values) is not None
    ]
    return table(header, rows)


def records_verdict(measured: Measured) -> str:
    """One sentence on lost and duplicated records: zero, or how many and where."""
    wrong = [s for s in measured.sessions if s.values is None or not s.values.exact]
    if not wrong:
        return (
            "No record lost or duplicated: every output holds each even value from 0 to its "
            "highest exactly once."
        )
    named = ", ".join(f"#{s.repetition + 1} {RECOVERY_LABELS[s.subject]}" for s in wrong)
    return f"**Records lost or duplicated (must be zero)** in: {named}; see the table."


def load_note(measured: Measured, what: str) -> str:
    loads = [session.load_average for session in measured.sessions]
    return (
        f"The 1-minute load average was {min(loads):.1f} to {max(loads):.1f} when the sessions "
        f"started. {what} is mostly a JVM and Spark start, which a busy machine slows down: "
        "compare the paired ratios rather than the absolute seconds. The streamjobs server was "
        "up, and idle, during the bare sessions too."
    )
