"""Figure 4 written up: API latency per route and store, the tick, the server's memory, and —
where a limit is missed — where the time goes (py-spy of the server, cProfile of a tick)."""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from bench import figure_control_plane
from bench.figure_control_plane import (
    BURST_SECONDS,
    MEMORY_LIMIT,
    P99_LIMIT,
    RATE_TOLERANCE,
    TICK_LIMIT,
    Backend,
    ControlPlanePlan,
    Measured,
)
from bench.latency import LoadSummary, RouteLatency
from bench.load_generator import PAGE, ROUTES
from bench.profiles import Hotspot, StackProfile, cprofile_packages, cprofile_rows
from bench.results import FigureResult, Measurement

PROFILE_ROWS = 12

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
most {plan.connections} keep-alive connections of `bench/http_client.py` (requests prebuilt as
bytes, answers parsed by httptools: about 5% of a core at 200 requests/s, where httpx took a
whole core, fell behind its own schedule and passed its backlog off as the server's latency),
on uvloop, with the admin's bearer token. The
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
**Memory** is the server process's RSS (psutil) after each load run. **Capacity**: after the
load runs, {plan.one_at_a_time:,} requests of the same mix go over one connection, all scheduled
within {BURST_SECONDS * 1000:g} ms so that each waits for the one before to be answered (given up
after {plan.one_at_a_time_drain_seconds:g} s): the rate achieved is what one server process
answers one request at a time, and its CPU meanwhile tells its own work from its waiting.

**Tick.** After the server stops, every job is Run (a new application through
`ApplicationService.run`), and `Supervisor.run_once()` — built as tests/supervisor builds it: a fake
launcher, a fake clock, `executor_reader=lambda h: None` — submits their drivers; each driver
reports once (a heartbeat), the next tick moves every application to RUNNING, and then
{plan.ticks} ticks are timed, each observing {plan.jobs:,} live applications with nothing to do.
The fake launcher keeps its drivers in a dict by pid (the tests' one searches a list, which over
{plan.jobs:,} drivers would time the fake). One more tick runs under cProfile.

**Limits** (absolute, not ratios): p99 < {P99_LIMIT.threshold:g} ms at the offered rate, tick
< {TICK_LIMIT.threshold:g} ms, server RSS < {MEMORY_LIMIT.threshold:g} MiB."""


def details(measured: Measured) -> str:
    sections = [
        "**Seeding and start-up.**\n\n" + seeding_table(measured.backends),
        *(
            f"**{backend.name}: latency by route (ms; median of the runs' figures).**\n\n"
            + route_table(backend.loads)
            for backend in measured.backends
        ),
        "**Every load run.**\n\n" + runs_table(measured.backends),
        "**Supervisor ticks.**\n\n" + ticks_table(measured.backends),
    ]
    for backend in measured.backends:
        sections.extend(where_time_goes(measured.plan, backend))
    return "\n\n".join(sections)


def seeding_table(backends: Sequence[Backend]) -> str:
    lines = [
        "| store | jobs | applications | creating the jobs s | inserting the applications s "
        "| server start s | server RSS before the load MiB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for backend in backends:
        seeded = backend.seeded
        lines.append(
            f"| {backend.name} | {len(seeded.names):,} | {seeded.applications:,} | "
            f"{seeded.jobs_seconds:.1f} | {seeded.applications_seconds:.1f} | "
            f"{backend.server_start_seconds:.1f} | {backend.idle_rss_mib:.0f} |"
        )
    return "\n".join(lines)


def route_table(loads: Sequence[LoadSummary]) -> str:
    lines = [
        "| route | requests per run | errors (given up) | p50 | p99 | max | service p50 "
        "| service p99 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for route in ROUTES:
        rows = [load.route(route) for load in loads]

        def median(value: Callable[[RouteLatency], float], rows: list[RouteLatency] = rows) -> str:
            return f"{statistics.median(value(row) for row in rows):.1f}"

        requests = statistics.median(row.requests for row in rows)
        lines.append(
            f"| {route} | {requests:,.0f} | {sum(r.errors for r in rows)} "
            f"({sum(r.unanswered for r in rows)}) | "
            f"{median(lambda r: r.p50_ms)} | {median(lambda r: r.p99_ms)} | "
            f"{median(lambda r: r.max_ms)} | {median(lambda r: r.service_p50_ms)} | "
            f"{median(lambda r: r.service_p99_ms)} |"
        )
    return "\n".join(lines)


def runs_table(backends: Sequence[Backend]) -> str:
    lines = [
        "| store | run | requests/s achieved | errors | worst p99 ms | generator behind, p99 ms "
        "| server CPU per request ms | server CPU, cores | server RSS after MiB | load average |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for backend in backends:
        runs = zip(
            backend.loads,
            backend.cpu_ms_per_request,
            backend.cpu_cores,
            backend.rss_mib,
            backend.load_averages,
            strict=True,
        )
        for number, (load, cpu, cores, rss, average) in enumerate(runs, start=1):
            worst = max(load.routes, key=lambda route: route.p99_ms)
            lines.append(
                f"| {backend.name} | {number} | {load.achieved_rate:.1f} | {load.errors} | "
                f"{worst.p99_ms:.1f} ({worst.route}) | {load.behind_ms:.1f} | {cpu:.1f} | "
                f"{cores:.2f} | {rss:.0f} | {average:.1f} |"
            )
    return "\n".join(lines)


def ticks_table(backends: Sequence[Backend]) -> str:
    lines = [
        "| store | live applications | Run of every job s | tick submitting every driver ms "
        "| tick moving them to RUNNING ms | steady ticks ms |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for backend in backends:
        ticks = backend.ticks
        steady = ", ".join(f"{ms:.0f}" for ms in ticks.steady_ms)
        lines.append(
            f"| {backend.name} | {ticks.live:,} | {ticks.runs_seconds:.1f} | "
            f"{ticks.submit_ms:,.0f} | {ticks.running_ms:,.0f} | {steady} |"
        )
    return "\n".join(lines)


def where_time_goes(plan: ControlPlanePlan, backend: Backend) -> list[str]:
    """The server's capacity, and the profiles behind a missed limit: the tick's cProfile and
    the server's py-spy."""
    sections = []
    if statistics.median(backend.ticks.steady_ms) >= TICK_LIMIT.threshold:
        sections.append(tick_profile(backend))
    sections.append(capacity(plan, backend))
    if backend.profile is not None and backend.profile_load is not None:
        sections.append(server_profile(backend.name, backend.profile, backend.profile_load))
    elif backend.profile_error is not None:
        sections.append(
            f"**{backend.name}: where the server's time goes.** A limit was missed, but no "
            f"py-spy profile could be taken: {backend.profile_error}."
        )
    return sections


def capacity(plan: ControlPlanePlan, backend: Backend) -> str:
    """The server's own work per request under the load, and its time per request one at a
    time: the difference is waiting, for the store's answers above all on PostgreSQL."""
    per_request = statistics.median(backend.cpu_ms_per_request)
    cores = statistics.median(backend.cpu_cores)
    sequential = backend.one_at_a_time
    each_ms = 1000 / sequential.achieved_rate if sequential.achieved_rate else float("inf")
    own_ms = min(backend.one_at_a_time_cpu_ms, each_ms)
    failed = f" ({sequential.errors} of them failed)" if sequential.errors else ""
    return (
        f"**{backend.name}: capacity.** Under the load the server's CPU came to a median "
        f"{per_request:.1f} ms a request, {cores:.0%} of a core at {plan.rate:g} requests/s. "
        f"One request at a time ({sequential.requests:,} of the load's mix over one "
        f"connection{failed}) it answered {sequential.achieved_rate:.0f} requests/s, "
        f"{each_ms:.2f} ms each, {own_ms:.2f} ms of them its CPU; the other "
        f"{each_ms - own_ms:.2f} ms it waited: for the store's answers (reads wait for them on "
        "the event loop, so no other request runs meanwhile), for the client's turn and for the "
        "loopback (which, under load, overlap other requests' work). The nearer the share of "
        "each second the server is busy comes to 100%, the longer any pause (a collection, the "
        "machine's other work) delays the requests queued behind it."
    )


def tick_profile(backend: Backend) -> str:
    stats = backend.ticks.profile
    total = max(row.cumulative_seconds for row in cprofile_rows(stats, top=1))
    lines = [
        "| function | calls | own s | with callees s | share of the tick |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in cprofile_rows(stats, top=PROFILE_ROWS):
        lines.append(
            f"| `{row.function}` | {row.calls:,} | {row.own_seconds:.3f} | "
            f"{row.cumulative_seconds:.3f} | {row.cumulative_seconds / total:.0%} |"
        )
    return (
        f"**{backend.name}: where a tick's time goes** (cProfile of one steady tick over "
        f"{backend.ticks.live:,} live applications, {total:.2f} s under the profiler; the "
        f"{PROFILE_ROWS} functions with the most time including their callees). Own time by "
        f"package: {_shares(cprofile_packages(stats))}.\n\n" + "\n".join(lines)
    )


def server_profile(name: str, profile: StackProfile, load: LoadSummary) -> str:
    own = _hotspot_table("function (own time)", profile.own)
    mine = _hotspot_table("streamjobs function (with its callees)", profile.inclusive)
    return (
        f"**{name}: where the server's time goes** (py-spy `--gil`: 100 samples/s of the "
        f"thread holding the GIL, {profile.samples:,} samples, during one more load run at the "
        f"same rate: {load.achieved_rate:.0f} requests/s, worst p99 "
        f"{max(route.p99_ms for route in load.routes):.0f} ms under the profiler). Samples by "
        f"the package of the innermost frame: {_shares(profile.packages)}.\n\n"
        f"{own}\n\n{mine}"
    )


def _hotspot_table(heading: str, hotspots: Sequence[Hotspot]) -> str:
    lines = [f"| {heading} | samples | share |", "|---|---:|---:|"]
    lines += [f"| `{item.name}` | {item.amount:,.0f} | {item.share:.0%} |" for item in hotspots]
    return "\n".join(lines)


def _shares(hotspots: Sequence[Hotspot]) -> str:
    return ", ".join(f"{item.name} {item.share:.0%}" for item in hotspots if item.share >= 0.01)


def notes(measured: Measured) -> list[str]:
    plan = measured.plan
    found = []
    averages = [average for backend in measured.backends for average in backend.load_averages]
    found.append(
        f"The 1-minute load average was {min(averages):.1f} to {max(averages):.1f} when the load "
        "runs started, on a machine whose cores the server, the load generator (about 5% of "
        "a core at 200 requests/s) and anything else running share: latencies carry that "
        "noise."
    )
    behind = max(load.behind_ms for backend in measured.backends for load in backend.loads)
    if behind > 10:
        found.append(
            f"The generator started some requests up to {behind:.0f} ms late (p99 of a run): "
            "the machine could not keep its schedule exactly. Latency is still counted from the "
            "scheduled start, so the lateness is in the figures."
        )
    loads = [load for backend in measured.backends for load in backend.loads]
    errors = sum(load.errors for load in loads)
    unanswered = sum(load.unanswered for load in loads)
    if errors:
        found.append(
            f"{errors} of {sum(load.requests for load in loads):,} measured requests failed, "
            f"{unanswered} of them given up unanswered {plan.drain_seconds:g} s after the run's "
            "last request was due: the server could not keep the rate, and the p99s that count "
            "them are lower bounds."
        )
    for name, reason in measured.skipped.items():
        found.append(f"{name} was not measured: {reason}.")
    if plan == figure_control_plane.QUICK:
        found.append(
            f"Quick run: {plan.jobs} jobs, {plan.rate:g} requests/s for {plan.seconds:g} s, "
            f"{', '.join(plan.backends)} only, one run — a smoke test of the harness, not the "
            "figure."
        )
    return found
