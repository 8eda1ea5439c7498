"""Figure 4, the control plane: a seeded store served by a real server under an open-loop load,
then the supervisor's tick over every job running; ``bench.control_plane_report`` writes it up.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.control_plane_store import Seeded, Ticks, job_manifest, measure_ticks, seed
from bench.latency import LoadSummary, Request, summarise
from bench.processes import run_subject
from bench.results import Limit
from bench.server_process import ServerProcess

REPOSITORY = Path(__file__).resolve().parent.parent
SQLITE = "SQLite"
POSTGRESQL = "PostgreSQL"

P99_LIMIT = Limit(50.0)
TICK_LIMIT = Limit(100.0)
MEMORY_LIMIT = Limit(300.0)
RATE_TOLERANCE = 0.98

Log = Callable[[str], None]


@dataclass(frozen=True)
class ControlPlanePlan:
    """How big figure 4 is."""

    jobs: int
    applications_per_job: int
    rate: float
    seconds: float
    warmup_seconds: float
    repetitions: int
    ticks: int
    backends: tuple[str, ...]
    connections: int = 32
    drain_seconds: float = 5.0

    def rate_limit(self) -> Limit:
        return Limit(round(self.rate * RATE_TOLERANCE, 1), at_least=True)


QUICK = ControlPlanePlan(
    jobs=100,
    applications_per_job=10,
    rate=50,
    seconds=5,
    warmup_seconds=1,
    repetitions=1,
    ticks=3,
    backends=(SQLITE,),
)
FULL = ControlPlanePlan(
    jobs=1000,
    applications_per_job=10,
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


def run_figure(plan: ControlPlanePlan, work: Path, log: Log = print) -> Measured:
    work.mkdir(parents=True, exist_ok=True)
    backends, skipped = [], {}
    for name in plan.backends:
        try:
            with database(name, work / name.lower()) as url:
                backends.append(run_backend(name, url, plan, work / name.lower(), log))
        except Unavailable as missing:
            log(f"figure 4: {name} skipped: {missing}")
            skipped[name] = str(missing)
    if not backends:
        raise RuntimeError(f"figure 4 measured no store: {skipped}")
    return Measured(plan=plan, backends=backends, skipped=skipped)


class Unavailable(RuntimeError):
    pass


@contextlib.contextmanager
def database(name: str, directory: Path) -> Iterator[str]:
    """The SQLAlchemy URL of an empty store: a SQLite file, or a database on a throwaway
    PostgreSQL cluster (the tests' ``PostgresServer``), removed afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    if name == SQLITE:
        yield f"sqlite:///{directory / 'home' / 'streamjobs.db'}"
        return
    from streamjobs.devtools.postgres import (
        PostgresServer,
        ServiceUnavailableError,
        find_postgres_bin_dir,
    )

    try:
        server = PostgresServer.start(find_postgres_bin_dir())
    except ServiceUnavailableError as missing:
        raise Unavailable(str(missing)) from missing
    try:
        yield server.url_for(server.create_database())
    finally:
        server.stop()


def run_backend(name: str, url: str, plan: ControlPlanePlan, work: Path, log: Log) -> Backend:
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    log(f"figure 4: {name}: seeding {plan.jobs:,} jobs, {plan.applications_per_job} runs each")
    seeded = seed(
        home, url, jobs=plan.jobs, applications_per_job=plan.applications_per_job, log=log
    )
    jobs_file = work / "jobs.json"
    jobs_file.write_text(json.dumps({"names": seeded.names, "manifest": job_manifest("x")}))
    loads, rss, load_averages = [], [], []
    with ServerProcess(home, database_url=url, supervisor=False) as server:
        for repetition in range(plan.repetitions):
            load_averages.append(os.getloadavg()[0])
            loads.append(run_load(server, plan, jobs_file, work, f"load-{repetition + 1}"))
            rss.append(server.rss_mib())
            log(f"figure 4: {name}: run {repetition + 1}: {describe_load(loads[-1])}")
    log(f"figure 4: {name}: timing the supervisor's tick over {plan.jobs:,} running jobs")
    ticks = measure_ticks(home, url, seeded.names, ticks=plan.ticks, log=log)
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
        f"--connections={plan.connections}",
        f"--drain-seconds={plan.drain_seconds:g}",
        f"--output={output}",
    ]
    environment = {
        "PYTHONPATH": os.pathsep.join([str(REPOSITORY), os.environ.get("PYTHONPATH", "")])
    }
    timeout = plan.warmup_seconds + plan.seconds + 120
    run_subject(name, command, directory=work, environment=environment, timeout=timeout)
    document = json.loads(output.read_text(encoding="utf-8"))
    requests = [Request(*record) for record in document["requests"]]
    return summarise(requests, offered_rate=float(document["rate"]))


def describe_load(summary: LoadSummary) -> str:
    worst = max(summary.routes, key=lambda route: route.p99_ms)
    return (
        f"{summary.achieved_rate:.0f} of {summary.offered_rate:g} requests/s, "
        f"{summary.errors} errors ({summary.unanswered} given up), "
        f"worst p99 {worst.p99_ms:.0f} ms ({worst.route})"
    )
