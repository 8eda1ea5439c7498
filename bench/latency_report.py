"""Figure 6 written up: its runs as comparisons, a measurement, and the method."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bench.latency_kafka import CAUGHT_UP_SECONDS, DRAIN_SECONDS
from bench.latency_samples import SQL
from bench.latency_subjects import (
    BASELINE,
    LABELS,
    LOW_LATENCY,
    MASTER,
    REAL_TIME,
    STREAMJOBS,
    Mode,
)
from bench.report import table
from bench.results import Comparison, FigureResult, Limit, Measurement, Target

if TYPE_CHECKING:
    from bench.figure_latency import LatencyPlan, LatencyRun

START_TIMEOUT_SECONDS = 180.0

TARGET = Target(1.05, at_least=False)
REAL_TIME_LIMIT = Limit(50.0)
REAL_TIME_NOTE = (
    "A real-time batch is a checkpoint interval: records flow through as they come, and only the "
    "boundary between two batches holds them; five-minute batches keep a run's measured window "
    "inside one."
)


def figure_result(plan: LatencyPlan, runs: Sequence[LatencyRun]) -> FigureResult:
    return FigureResult(
        number=6,
        slug="latency",
        title="End-to-end latency: Kafka → parse, filter, project → Kafka (log-append to "
        "log-append)",
        comparisons=comparisons(plan, runs),
        measurements=measurements(plan, runs),
        method=method(plan),
        details=details(plan, runs),
        notes=notes(runs),
    )


def p99_samples(
    runs: Sequence[LatencyRun], subject: str, mode: Mode, rate: int
) -> tuple[float, ...]:
    """The subject's p99 (ms) under ``mode`` at ``rate``, one per repetition, in order."""
    chosen = [r for r in runs if r.subject == subject and r.mode == mode and r.rate == rate]
    return tuple(r.latencies.p99_ms for r in sorted(chosen, key=lambda r: r.repetition))


def comparisons(plan: LatencyPlan, runs: Sequence[LatencyRun]) -> list[Comparison]:
    found = []
    for rate in plan.rates:
        for mode in plan.modes:
            subjects = [STREAMJOBS] + ([LOW_LATENCY] if mode in plan.low_latency_modes else [])
            for subject in subjects:
                found.append(
                    Comparison(
                        name=f"p99 latency, {mode.label}, {rate:,}/s"
                        + (", low latency" if subject == LOW_LATENCY else ""),
                        metric="ms",
                        candidate_label=LABELS[subject],
                        baseline_label=LABELS[BASELINE],
                        candidate=p99_samples(runs, subject, mode, rate),
                        baseline=p99_samples(runs, BASELINE, mode, rate),
                        target=TARGET if subject == STREAMJOBS else None,
                    )
                )
    return found


def measurements(plan: LatencyPlan, runs: Sequence[LatencyRun]) -> list[Measurement]:
    if REAL_TIME not in plan.modes:
        return []
    return [
        Measurement(
            name=f"RealTime p99 latency, {rate:,}/s",
            metric="ms",
            label=LABELS[STREAMJOBS],
            samples=p99_samples(runs, STREAMJOBS, REAL_TIME, rate),
            limit=REAL_TIME_LIMIT,
        )
        for rate in plan.rates
    ]


def method(plan: LatencyPlan) -> str:
    rates = " and ".join(f"{rate:,}" for rate in plan.rates)
    triggers = "; ".join(f"{mode.label} ({trigger_fields(mode)})" for mode in plan.modes)
    low_latency = ", ".join(mode.label for mode in plan.low_latency_modes) or "none in this run"
    real_time = REAL_TIME_NOTE if REAL_TIME in plan.modes else ""
    repetitions = f"{plan.repetitions} runs" if plan.repetitions > 1 else "one run"
    return f"""\
**Pipeline.** A `kafkajson` input (one partition, read from its end) → `{SQL}` (nine records in
ten pass) → a `kafka` output (one partition), on `{MASTER}`. Triggers: {triggers}. {real_time}

**Subjects.** (a) streamjobs: `python -m streamjobs.runner --manifest job.yaml --stop-file …` in
the sandbox a server gives every driver, as figure 1 runs it. (a') the same manifest with
`spec.pipeline.streaming.lowLatency: true`, under: {low_latency}. (b) the hand-written script
`bench/latency_baseline.py` (`from_json`, `where`, `select`, `to_json`, the same trigger),
handed the Spark settings streamjobs derives for the plain manifest. Each run has its own two
topics, checkpoint and JVM; one subject runs at a time, their order alternating by pair and
flipping between repetitions; {repetitions} of each. The
broker is warmed up first ({plan.broker_warm_up_seconds:g} s of records at
{plan.broker_warm_up_rate:,}/s sent through a topic of its own and read back): without it,
whichever subject ran first met a broker still compiling its produce and fetch paths, with a
p99 several milliseconds higher.

**Load.** A producer thread of the harness (confluent-kafka, `linger.ms=1`) sends ~120-byte
JSON records at {rates} records/s, open loop: record *n* is due *n*/rate s after its start, and
a late producer sends what is due at once. Each record carries its id and the producer's clock.
Production starts with the subject. Once the subject has caught up with the backlog of its start
(the newest output record comes from an input record sent at most {CAUGHT_UP_SECONDS:g} s before
the newest sent, or {START_TIMEOUT_SECONDS:.0f} s have passed), the run warms up for
{plan.warm_up_seconds:g} s of records; the next {plan.measure_seconds:g} s of records are
measured, and production stops after them. The achieved rate is the measured records over the
time the producer took to send them.

**Clock.** Both topics have `message.timestamp.type=LogAppendTime`, so the broker stamps each
record as it appends it. The clock starts on the input record's append time, which the pipeline
carries into the output (`appended_ms`), and stops on the output record's append time: one
clock, the broker's, at millisecond resolution. A record written twice (Continuous is
at-least-once) counts by its first copy; a kept record that has not come out {DRAIN_SECONDS:g} s
after the last send counts as missing. p50/p95/p99 interpolate linearly between ranks."""


def trigger_fields(mode: Mode) -> str:
    fields = ", ".join(f"`{key}: {value}`" for key, value in mode.streaming.items())
    return fields or "no trigger set"


def details(plan: LatencyPlan, runs: Sequence[LatencyRun]) -> str:
    header = ["trigger", "subject", "records", "p50", "p95", "p99", "max", "achieved rate"]
    header += ["missing", "duplicates", "produce → append p99", "first output, caught up after"]
    sections = []
    for rate in plan.rates:
        rows = [
            [run.mode.label, LABELS[run.subject], f"{run.latencies.records:,}"]
            + [f"{value:.0f}" for value in run.latencies.percentiles]
            + [f"{run.achieved_rate:,.0f}/s", run.latencies.missing, run.latencies.duplicates]
            + [f"{run.latencies.append_p99_ms:.0f}", started(run)]
            for run in runs
            if run.rate == rate
        ]
        sections.append(
            f"**{rate:,} records/s offered (ms, log-append → log-append).**\n\n"
            + table(header, rows)
        )
    return "\n\n".join(sections)


def started(run: LatencyRun) -> str:
    times = f"{run.started.first_output_seconds:.0f} s, {run.started.caught_up_seconds:.0f} s"
    return times if run.started.caught_up else f"{times} (not caught up)"


def notes(runs: Sequence[LatencyRun]) -> list[str]:
    slowest = min(runs, key=lambda run: run.achieved_rate / run.rate)
    idle = statistics.median(run.idle_before for run in runs)
    return [
        f"The producer kept at least {slowest.achieved_rate / slowest.rate:.1%} of the offered "
        f"rate in every measured window. Before each run the CPUs were idle "
        f"{idle:.0%} of the time (median).",
        "The latency includes the Kafka sink's producer batching (its `linger.ms`) and, for the "
        "micro-batch triggers, the wait for the batch in flight to end.",
    ]
