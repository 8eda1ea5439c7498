"""Figure 4 written up: API latency per route and store, the tick and the server's memory."""

from __future__ import annotations

import functools
import statistics
from pathlib import Path

from bench import figure_control_plane
from bench.figure_control_plane import (
    MEMORY_LIMIT,
    P99_LIMIT,
    RATE_TOLERANCE,
    TICK_LIMIT,
    Measured,
)
from bench.load_generator import PAGE, ROUTES
from bench.report import table
from bench.results import FigureResult, Measurement

log = functools.partial(print, flush=True)


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry."""
    plan = figure_control_plane.QUICK if quick else figure_control_plane.FULL
    return figure_result(figure_control_plane.run_figure(plan, work, log=log))


def figure_result(measured: Measured) -> FigureResult:
    plan = measured.plan
    return FigureResult(
        number=4,
        slug="control-plane",
        title=(
            f"Control plane: API latency at {plan.rate:g} requests/s, the supervisor's tick and "
            f"the server's memory ({plan.jobs:,} jobs, "
            f"{plan.jobs * plan.applications_per_job:,} finished applications)"
        ),
        comparisons=[],
        measurements=measurements(measured),
        method=method(measured),
        details=details(measured),
        notes=notes(measured),
    )


def measurements(measured: Measured) -> list[Measurement]:
    plan, backends = measured.plan, measured.backends
    found = [
        Measurement(
            name=f"{route} p99",
            metric="ms",
            label=backend.name,
            samples=tuple(load.route(route).p99_ms for load in backend.loads),
            limit=P99_LIMIT,
        )
        for route in ROUTES
        for backend in backends
    ]
    found += [
        Measurement(
            name="requests/s achieved",
            metric="requests/s",
            label=f"{backend.name}, {plan.rate:g} offered",
            samples=tuple(load.achieved_rate for load in backend.loads),
            limit=plan.rate_limit(),
        )
        for backend in backends
    ]
    found += [
        Measurement(
            name=f"supervisor tick over {backend.ticks.live:,} running jobs",
            metric="ms per tick",
            label=backend.name,
            samples=backend.ticks.steady_ms,
            limit=TICK_LIMIT,
        )
        for backend in backends
    ]
    found += [
        Measurement(
            name="server RSS after the load",
            metric="MiB",
            label=backend.name,
            samples=tuple(backend.rss_mib),
            limit=MEMORY_LIMIT,
        )
        for backend in backends
    ]
    return found


def method(measured: Measured) -> str:
    plan = measured.plan
    stores = " and ".join(backend.name for backend in measured.backends)
    return f"""\
**Store.** {stores}, each seeded before the server starts: the `admin` user and its token (as
`streamjobs admin bootstrap` makes them), {plan.jobs:,} pipeline jobs created one by one through
`JobService.create` (validated and audited as an API create is), and
{plan.applications_per_job} finished (COMPLETED) applications of each —
{plan.jobs * plan.applications_per_job:,} in all, bulk-inserted into the `applications` table
with the job's resolved template as their snapshot and run numbers 1..{plan.applications_per_job}
per job. PostgreSQL is a throwaway cluster (the tests' `PostgresServer`: `fsync`,
`synchronous_commit` and `full_page_writes` off), vacuumed and analysed after the seeding as
autovacuum would within minutes (unvacuumed, each count of the applications reads the whole
table instead of an index); SQLite is a file in WAL mode, as the server opens it.

**Server.** `python -m streamjobs.cli server` with `STREAMJOBS_SUPERVISOR=false` (only the HTTP
work is timed), on a free loopback port.

**Load.** `bench/load_generator.py` in its own process: open loop, {plan.rate:g} requests/s
(request *i* starts at *i*/{plan.rate:g} s whether or not earlier ones were answered), over at
most {plan.connections} keep-alive connections of `bench/http_client.py` (on uvloop, about 5% of a
core at 200 requests/s), with the admin's bearer token. The
requests go round five routes in turn ({plan.rate / len(ROUTES):g}/s
each), each to a job drawn at random: `GET /api/v1/jobs?limit={PAGE}` (list jobs),
`GET /api/v1/jobs/<name>` (get job), `GET /api/v1/jobs/<name>/applications?limit={PAGE}` (a job's
{plan.applications_per_job} applications), `GET /api/v1/applications?limit={PAGE}` (the newest of
all {plan.jobs * plan.applications_per_job:,}) and `PUT /api/v1/jobs/<name>` with the job's
unchanged manifest (apply: parsed, validated, compared, nothing written). {plan.warmup_seconds:g} s
of warm-up, then {plan.seconds:g} s measured; {plan.repetitions} run(s) per store. Requests
still unanswered {plan.drain_seconds:g} s after the last one was due are given up, so that a
server that cannot keep the rate does not make the run last as long as its backlog.

**Latency** is counted from the moment the schedule meant the request to start to the end of its
response, so a server that falls behind shows its queue (no coordinated omission); the service
time (from the real start) is in the details. p50 and p99 are over all the run's requests of a
route (linear interpolation), a request given up counting with the time it had waited (then the
p99 is a lower bound); the figure's sample is each run's p99, and the limit is checked on their
median. **Requests/s achieved** = successful responses / (last response - first
scheduled start); the load counts as kept up with at ≥ {RATE_TOLERANCE:.0%} of the offered rate.
**Memory** is the server process's RSS (psutil) after each load run.

**Tick.** After the server stops, every job is Run (a new application through
`ApplicationService.run`), and `Supervisor.run_once()` — built as tests/supervisor builds it: a fake
launcher, a fake clock, `executor_reader=lambda h: None` — submits their drivers; each driver
reports once (a heartbeat), the next tick moves every application to RUNNING, and then
{plan.ticks} ticks are timed, each observing {plan.jobs:,} live applications with nothing to do.
The fake launcher keeps its drivers in a dict by pid (the tests' one searches a list, which over
{plan.jobs:,} drivers would time the fake).

**Limits** (absolute, not ratios): p99 < {P99_LIMIT.threshold:g} ms at the offered rate, tick
< {TICK_LIMIT.threshold:g} ms, server RSS < {MEMORY_LIMIT.threshold:g} MiB."""


def details(measured: Measured) -> str:
    sections = []
    for backend in measured.backends:
        rows = []
        for route in ROUTES:
            found = [load.route(route) for load in backend.loads]
            values = [
                statistics.median(getattr(r, name) for r in found)
                for name in ("p50_ms", "p99_ms", "max_ms", "service_p50_ms", "service_p99_ms")
            ]
            errors = f"{sum(r.errors for r in found)} ({sum(r.unanswered for r in found)})"
            rows.append([route, errors, *(f"{value:.1f}" for value in values)])
        header = ["route", "errors (given up)", "p50", "p99", "max", "service p50", "service p99"]
        sections.append(
            f"**{backend.name}: latency by route (ms; median of the runs').** Seeded "
            f"{len(backend.seeded.names):,} jobs in {backend.seeded.jobs_seconds:.1f} s and "
            f"{backend.seeded.applications:,} applications in "
            f"{backend.seeded.applications_seconds:.1f} s; Run of every job "
            f"{backend.ticks.runs_seconds:.1f} s, the tick submitting them "
            f"{backend.ticks.submit_ms:,.0f} ms, the one moving them to RUNNING "
            f"{backend.ticks.running_ms:,.0f} ms.\n\n" + table(header, rows)
        )
    return "\n\n".join(sections)


def notes(measured: Measured) -> list[str]:
    plan = measured.plan
    averages = [average for backend in measured.backends for average in backend.load_averages]
    loads = [load for backend in measured.backends for load in backend.loads]
    found = [
        f"The 1-minute load average was {min(averages):.1f} to {max(averages):.1f} when the load "
        "runs started; the server, the load generator and anything else running share the "
        "cores, so latencies carry that noise. The generator was behind its schedule by up to "
        f"{max(load.behind_ms for load in loads):.0f} ms (p99 of a run), counted in the figures."
    ]
    errors = sum(load.errors for load in loads)
    if errors:
        found.append(
            f"{errors} of {sum(load.requests for load in loads):,} measured requests failed "
            f"({sum(load.unanswered for load in loads)} given up): the p99s are lower bounds."
        )
    found += [f"{name} was not measured: {reason}." for name, reason in measured.skipped.items()]
    if plan == figure_control_plane.QUICK:
        found.append("Quick run: a smoke test of the harness, not the figure.")
    return found
