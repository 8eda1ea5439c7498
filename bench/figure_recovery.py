"""Figure 3, recovery: from a SIGKILL of the driver to the next committed micro-batch.

streamjobs runs the rate -> parquet example under ``restartPolicy: Always`` with
``onFailureRetryInterval: 1``; once micro-batch 2 is committed, the driver's JVM and Python are
SIGKILLed and the supervisor starts a new attempt from the checkpoint (at once: its driver starts
up during the interval and holds its queries until the interval has passed). The baseline is a bare
cold restart: the bare ``spark-submit``'s process group is SIGKILLed and the same command started
again as soon as the killed ``spark-submit`` (the JVM it execs) has exited. Both are timed from
the kill to the modification time of the first commit file of a batch after the last one
committed before it. Target: streamjobs' median at most 1 s above the bare one's (a ``Target``
on the difference); every output must then hold each value the query keeps exactly once. The
sessions are ``bench.rate_sessions``' (shared with figure 2).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from bench import rate_sessions
from bench.rate_pipeline import OUTPUT
from bench.rate_sessions import (
    BARE,
    KILL_AFTER_BATCH,
    RESTART_POLICY,
    STREAMJOBS,
    Measured,
    Session,
)
from bench.results import Comparison, FigureResult, Spread, Target

TARGET = Target(1.0, at_least=False, difference=True)
LABELS = {STREAMJOBS: "(a) streamjobs, Always", BARE: "(b) bare cold restart"}

SessionValue = Callable[[Session], float]


def _noticed(session: Session) -> float:
    """When the driver's end was noticed: (a) the supervisor recorded the attempt's end; (b) the
    killed ``spark-submit`` was reaped (the cold restart starts right after)."""
    return session.detected_at if session.detected_at is not None else session.gone_at


PHASES: tuple[tuple[str, SessionValue], ...] = (
    ("SIGKILL -> end noticed (a: supervisor, b: JVM reaped)", lambda s: _noticed(s) - s.killed_at),
    ("-> next spark-submit started", lambda s: s.restarted_at - _noticed(s)),
    ("-> next commit file written", lambda s: s.recovered.at - s.restarted_at),
    ("total: SIGKILL -> next committed batch", lambda s: s.recovery_seconds),
)

log = functools.partial(print, flush=True)


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry: the sessions (shared with figure 2) written up as figure 3."""
    return figure_result(rate_sessions.measured(quick, work.parent / "rate-sessions", log=log))


def figure_result(measured: Measured) -> FigureResult:
    return FigureResult(
        number=3,
        slug="recovery",
        title="Recovery after a SIGKILL of the driver",
        comparisons=[recovery_comparison(measured)],
        method=method(measured),
        details=details(measured),
        notes=notes(measured),
    )


def recovery_comparison(measured: Measured) -> Comparison:
    return Comparison(
        name="SIGKILL → next committed batch",
        metric="s",
        candidate_label=LABELS[STREAMJOBS],
        baseline_label=LABELS[BARE],
        candidate=measured.samples(STREAMJOBS, lambda s: s.recovery_seconds),
        baseline=measured.samples(BARE, lambda s: s.recovery_seconds),
        target=TARGET,
    )


def method(measured: Measured) -> str:
    interval = RESTART_POLICY["onFailureRetryInterval"]
    return f"""\
**Sessions.** The pipeline, subjects and repetitions of figure 2 (the same sessions: each
starts from a fresh checkpoint, is timed to its first batch for figure 2, and goes on here).
Once micro-batch {KILL_AFTER_BATCH} is committed, the driver is SIGKILLed; the last batch id in
`commits/` once the killed processes are gone is the last committed before the kill.

**Subjects.** (a) streamjobs with `restartPolicy: {{type: Always, onFailureRetryInterval:
{interval}}}`: SIGKILL to the JVM and Python under the attempt's wrapper (the wrapper survives and
records exit code 137; the supervisor, woken by the wrapper's exit, judges the attempt failed
and submits the next one at once, whose driver starts its JVM and Spark session during the
{interval} s interval and holds its queries until the interval has passed:
`STREAMJOBS_RESTART_LEAD_SECONDS`, default 20). (b) bare: SIGKILL to the bare `spark-submit`'s
process group; as soon as the killed `spark-submit` (the JVM it execs) has exited, the same
command starts again (a cold restart from the same checkpoint, as a shell loop or `systemd`
with `Restart=always` and no delay would do it).

**Clock.** From just before the SIGKILL to the modification time of the first
`<checkpoint>/{OUTPUT}/commits/<id>` with an id above the last one committed before the kill.
In both, that batch is the one the killed driver had planned (its offsets were in the write-ahead
log) and re-runs with the same offsets.

**Target.** streamjobs' median ≤ the bare median + 1 s: a `Target` on the difference of the
medians (`Target(1.0, at_least=False, difference=True)` in `bench/results.py`), not on their
ratio; the summary's ratio is shown for reference only. 'paired' verdicts compare each
repetition's own difference with the bound.

**Records.** After the sessions, one Spark process reads every output through its
`_spark_metadata` log (committed files only) and lists its `value`s: each even value from 0 to
the highest written must be there exactly once. Lost = even values below the highest missing;
duplicated = rows beyond the first of their value. Both must be zero. ({measured.plan.repetitions}
session(s) per subject.)"""


def details(measured: Measured) -> str:
    comparison = recovery_comparison(measured)
    pairs = zip(comparison.candidate, comparison.baseline, strict=True)
    paired = Spread.of([candidate - baseline for candidate, baseline in pairs])
    sections = [
        f"**(a) - (b).** {comparison.difference:+.2f} s between the medians (paired "
        f"{paired.low:+.2f} to {paired.high:+.2f} s); the target allows +{TARGET.threshold:g} s.",
        "**Every session (seconds; batches are ids).**\n\n" + sessions_table(measured),
        "**Where the time goes (medians, seconds).**\n\n" + phase_table(measured),
        "**By phase, (a) - (b):** "
        + "; ".join(
            f"{label} {measured.median(STREAMJOBS, v) - measured.median(BARE, v):+.2f} s"
            for label, v in PHASES
        )
        + ". Before its new spark-submit, (a) waits for the supervisor to see the wrapper exit "
        "(a pidfd wakes its loop) and judge the attempt; the new driver then holds its queries "
        "until `onFailureRetryInterval` (1 s, counted from the judgement) has passed, which it "
        "spends starting its JVM and Spark session, so the interval is inside the last phase "
        "and costs time only when the driver starts in less than it.",
        "**Records in the outputs.**\n\n" + records_table(measured),
    ]
    return "\n\n".join(sections)


def sessions_table(measured: Measured) -> str:
    lines = [
        "| # | subject | ran | last batch before kill | next batch | SIGKILL -> next batch "
        "| load average |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for session in measured.sessions:
        lines.append(
            f"| {session.repetition + 1} | {LABELS[session.subject]} | "
            f"{'first' if session.first else 'second'} | {session.killed_batch} | "
            f"{session.recovered.batch} | {session.recovery_seconds:.1f} | "
            f"{session.load_average:.1f} |"
        )
    return "\n".join(lines)


def phase_table(measured: Measured) -> str:
    lines = [f"| | {LABELS[STREAMJOBS]} | {LABELS[BARE]} |", "|---|---:|---:|"]
    for label, value in PHASES:
        cells = " | ".join(f"{measured.median(subject, value):.2f}" for subject in LABELS)
        lines.append(f"| {label} | {cells} |")
    return "\n".join(lines)


def records_table(measured: Measured) -> str:
    lines = [
        "| # | subject | rows | distinct values | highest value | lost | duplicated | unexpected |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for session in measured.sessions:
        check = session.values
        if check is None:
            continue
        lines.append(
            f"| {session.repetition + 1} | {LABELS[session.subject]} | {check.rows} | "
            f"{check.distinct} | {check.highest} | {check.lost} | {check.duplicated} | "
            f"{check.unexpected} |"
        )
    return "\n".join(lines)


def records_verdict(measured: Measured) -> str:
    """One sentence on lost and duplicated records: zero, or how many and where."""
    wrong = [s for s in measured.sessions if s.values is None or not s.values.exact]
    if not wrong:
        return (
            "No record lost or duplicated: every output holds each even value from 0 to its "
            "highest exactly once."
        )
    named = ", ".join(f"#{s.repetition + 1} {LABELS[s.subject]}" for s in wrong)
    return f"**Records lost or duplicated (must be zero)** in: {named}; see the table."


def notes(measured: Measured) -> list[str]:
    loads = [session.load_average for session in measured.sessions]
    return [
        records_verdict(measured),
        f"The 1-minute load average was {min(loads):.1f} to {max(loads):.1f} when the sessions "
        "started; recovery is mostly a JVM and Spark start, which a busy machine slows down.",
    ]
