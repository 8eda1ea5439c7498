"""Figure 4, the control plane: a seeded store served by a real server under an open-loop load,
then the supervisor's tick over every job running; and its write-up: API latency per route and
store, the tick and the server's memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.control_plane_store import Seeded, Ticks, job_manifest, measure_ticks, seed
from bench.latency import LoadSummary, Request, summarise
from bench.load_generator import CONNECTIONS, DRAIN_SECONDS, PAGE, ROUTES
from bench.processes import HARNESS_PATH, log, run_subject
from bench.report import table
from bench.results import FigureResult, Limit, Measurement
from bench.server_process import ServerProcess
from streamjobs.devtools.postgres import (
    PostgresServer,
    ServiceUnavailableError,
    find_postgres_bin_dir,
)

SQLITE = "SQLite"
POSTGRESQL = "PostgreSQL"

P99_LIMIT = Limit(50.0)
TICK_LIMIT = Limit(100.0)
MEMORY_LIMIT = Limit(300.0)
RATE_TOLERANCE = 0.98
APPLICATIONS_PER_JOB = 10


@dataclass(frozen=True)
class ControlPlanePlan:
    """How big figure 4 is."""

    jobs: int
    rate: float
    seconds: float
    warmup_seconds: float
    repetitions: int
    ticks: int
    backends: tuple[str, ...]


QUICK = ControlPlanePlan(
    jobs=100,
    rate=50,
    seconds=5,
    warmup_seconds=1,
    repetitions=1,
    ticks=3,
    backends=(SQLITE,),
)
FULL = ControlPlanePlan(
    jobs=1000,
    rate=200,
    seconds=12,
    warmup_seconds=3,
    repetitions=3,
    ticks=5,
    backends=(SQLITE, POSTGRESQL),
)


@dataclass(frozen=True)
class Backend:
    """Everything measured on one store."""

    name: str
    seeded: Seeded
    loads: list[LoadSummary]
    rss_mib: list[float]
    load_averages: list[float]
    ticks: Ticks


@dataclass(frozen=True)
class Measured:
    plan: ControlPlanePlan
    backends: list[Backend]
    skipped: dict[str, str]


def run_figure(plan: ControlPlanePlan, work: Path) -> Measured:
    work.mkdir(parents=True, exist_ok=True)
    backends, skipped = [], {}
    for name in plan.backends:
        try:
            with database(name, work / name.lower()) as url:
                backends.append(run_backend(name, url, plan, work / name.lower()))
        except ServiceUnavailableError as missing:
            log(f"figure 4: {name} skipped: {missing}")
            skipped[name] = str(missing)
    if not backends:
        raise RuntimeError(f"figure 4 measured no store: {skipped}")
    return Measured(plan=plan, backends=backends, skipped=skipped)


@contextlib.contextmanager
def database(name: str, directory: Path) -> Iterator[str]:
    """The SQLAlchemy URL of an empty store: a SQLite file, or a database on a throwaway
    PostgreSQL cluster (the tests' ``PostgresServer``), removed afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    if name == SQLITE:
        yield f"sqlite:///{directory / 'home' / 'streamjobs.db'}"
        return
    server = PostgresServer.start(find_postgres_bin_dir())  # ServiceUnavailableError: skipped
    try:
        yield server.url_for(server.create_database())
    finally:
        server.stop()


def run_backend(name: str, url: str, plan: ControlPlanePlan, work: Path) -> Backend:
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    log(f"figure 4: {name}: seeding {plan.jobs:,} jobs, {APPLICATIONS_PER_JOB} runs each")
    seeded = seed(home, url, jobs=plan.jobs, applications_per_job=APPLICATIONS_PER_JOB)
    jobs_file = work / "jobs.json"
    jobs_file.write_text(json.dumps({"names": seeded.names, "manifest": job_manifest("x")}))
    loads, rss, load_averages = [], [], []
    with ServerProcess(home, database_url=url, supervisor=False) as server:
        for repetition in range(plan.repetitions):
            load_averages.append(os.getloadavg()[0])
            load = run_load(server, plan, jobs_file, work, f"load-{repetition + 1}")
            loads.append(load)
            rss.append(server.rss_mib())
            worst = max(load.routes, key=lambda route: route.p99_ms)
            log(
                f"figure 4: {name}: run {repetition + 1}: {load.achieved_rate:.0f} of "
                f"{plan.rate:g} requests/s, {load.errors} errors ({load.unanswered} given up), "
                f"worst p99 {worst.p99_ms:.0f} ms ({worst.route})"
            )
    log(f"figure 4: {name}: timing the supervisor's tick over {plan.jobs:,} running jobs")
    ticks = measure_ticks(home, url, seeded.names, ticks=plan.ticks)
    return Backend(name, seeded, loads, rss, load_averages, ticks)


def run_load(
    server: ServerProcess, plan: ControlPlanePlan, jobs_file: Path, work: Path, name: str
) -> LoadSummary:
    """One run of the load generator in its own process; its requests summed up."""
    output = work / f"{name}.json"
    command = [
        sys.executable,
        "-m",
        "bench.load_generator",
        f"--url={server.url}",
        f"--token-file={server.home / 'admin-token'}",
        f"--jobs-file={jobs_file}",
        f"--rate={plan.rate:g}",
        f"--seconds={plan.seconds:g}",
        f"--warmup-seconds={plan.warmup_seconds:g}",
        f"--output={output}",
    ]
    timeout = plan.warmup_seconds + plan.seconds + 120
    run_subject(name, command, directory=work, environment=HARNESS_PATH, timeout=timeout)
    document = json.loads(output.read_text(encoding="utf-8"))
    requests = [Request(*record) for record in document["requests"]]
    return summarise(requests)


# The write-up: API latency per route and store, the tick and the server's memory.


def figure(quick: bool, work: Path) -> FigureResult:
    """``bench.run``'s entry."""
    return figure_result(run_figure(QUICK if quick else FULL, work))


def figure_result(measured: Measured) -> FigureResult:
    plan = measured.plan
    return FigureResult(
        number=4,
        slug="control-plane",
        title=(
            f"Control plane: API latency at {plan.rate:g} requests/s, the supervisor's tick and "
            f"the server's memory ({plan.jobs:,} jobs, "
            f"{plan.jobs * APPLICATIONS_PER_JOB:,} finished applications)"
        ),
        comparisons=[],
        measurements=measurements(measured),
        method=method(measured),
        details=details(measured),
        notes=notes(measured),
    )


def measurements(measured: Measured) -> list[Measurement]:
    """Every route's p99 on every store, then each store's rate achieved, tick and memory."""
    plan, backends = measured.plan, measured.backends
    found = []
    for route in ROUTES:
        for backend in backends:
            p99 = tuple(load.route(route).p99_ms for load in backend.loads)
            found.append(Measurement(f"{route} p99", "ms", backend.name, p99, P99_LIMIT))
    rate_limit = Limit(round(plan.rate * RATE_TOLERANCE, 1), at_least=True)
    for backend in backends:
        rate = tuple(load.achieved_rate for load in backend.loads)
        label = f"{backend.name}, {plan.rate:g} offered"
        found.append(Measurement("requests/s achieved", "requests/s", label, rate, rate_limit))
    for backend in backends:
        tick = f"supervisor tick over {backend.ticks.live:,} running jobs"
        ms = backend.ticks.steady_ms
        found.append(Measurement(tick, "ms per tick", backend.name, ms, TICK_LIMIT))
    for backend in backends:
        rss = tuple(backend.rss_mib)
        found.append(
            Measurement("server RSS after the load", "MiB", backend.name, rss, MEMORY_LIMIT)
        )
    return found


def method(measured: Measured) -> str:
    plan = measured.plan
    stores = " and ".join(backend.name for backend in measured.backends)
    return f"""\
**Store.** {stores}, each seeded before the server starts: the `admin` user and its token (as
`streamjobs admin bootstrap` makes them), {plan.jobs:,} pipeline jobs created one by one through
`JobService.create` (validated and audited as an API create is), and
{APPLICATIONS_PER_JOB} finished (COMPLETED) applications of each —
{plan.jobs * APPLICATIONS_PER_JOB:,} in all, bulk-inserted into the `applications` table
with the job's resolved template as their snapshot and run numbers 1..{APPLICATIONS_PER_JOB}
per job. PostgreSQL is a throwaway cluster (the tests' `PostgresServer`: `fsync`,
`synchronous_commit` and `full_page_writes` off), vacuumed and analysed after the seeding as
autovacuum would within minutes (unvacuumed, each count of the applications reads the whole
table instead of an index); SQLite is a file in WAL mode, as the server opens it.

**Server.** `python -m streamjobs.cli server` with `STREAMJOBS_SUPERVISOR=false` (only the HTTP
work is timed), on a free loopback port.

**Load.** `bench/load_generator.py` in its own process: open loop, {plan.rate:g} requests/s
(request *i* starts at *i*/{plan.rate:g} s whether or not earlier ones were answered), over at
most {CONNECTIONS} keep-alive connections of its own lean client (on uvloop, about 5% of a
core at 200 requests/s), with the admin's bearer token. The requests go round five routes in
turn ({plan.rate / len(ROUTES):g}/s each), each to a job drawn at random:
`GET /api/v1/jobs?limit={PAGE}` (list jobs), `GET /api/v1/jobs/<name>` (get job),
`GET /api/v1/jobs/<name>/applications?limit={PAGE}` (a job's {APPLICATIONS_PER_JOB} applications),
`GET /api/v1/applications?limit={PAGE}` (the newest of all {plan.jobs * APPLICATIONS_PER_JOB:,})
and `PUT /api/v1/jobs/<name>` with the job's unchanged manifest (apply: parsed, validated,
compared, nothing written). {plan.warmup_seconds:g} s of warm-up, then {plan.seconds:g} s
measured; {plan.repetitions} run(s) per store. Requests still unanswered {DRAIN_SECONDS:g} s
after the last one was due are given up, so that a server that cannot keep the rate does not
make the run last as long as its backlog.

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
    if plan == QUICK:
        found.append("Quick run: a smoke test of the harness, not the figure.")
    return found
