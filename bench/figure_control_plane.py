"""Figure 4, the control plane: API latency under load, the supervisor's tick, the server's memory.

For each store (SQLite, then PostgreSQL): ``bench.control_plane_store`` seeds it with the jobs
and finished applications, a real ``streamjobs server`` serves it (supervisor off, so only the
HTTP work is timed), and ``bench.load_generator`` — its own process, over loopback — sends an
open-loop mix of list jobs / get job / list a job's applications / list all applications / apply
(unchanged) at a fixed rate, several times; the server's RSS is read after each run, and one more
run sends the mix one request at a time to measure its capacity. Then the server stops and the
supervisor's tick is timed over one RUNNING application per job on the same store. When a latency
or rate limit is missed, one more load run goes under py-spy to say where the server's time goes;
the tick's cProfile is always taken. ``bench.control_plane_report`` writes it up.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from bench.control_plane_store import Seeded, Ticks, job_manifest, measure_ticks, seed
from bench.latency import LoadSummary, Request, summarise
from bench.processes import SubjectFailed, run_subject
from bench.profiles import StackProfile, read_collapsed
from bench.results import Limit
from bench.server_process import ServerProcess

REPOSITORY = Path(__file__).resolve().parent.parent
SQLITE = "SQLite"
POSTGRESQL = "PostgreSQL"

P99_LIMIT = Limit(50.0)
TICK_LIMIT = Limit(100.0)
MEMORY_LIMIT = Limit(300.0)
RATE_TOLERANCE = 0.98
"""The achieved rate must be at least this share of the offered one for the load to count as
kept up with (an open-loop generator sends exactly the offered rate)."""

BURST_SECONDS = 0.05
"""The one-at-a-time run schedules all its requests within this, so a queue forms at once."""

Log = Callable[[str], None]


@dataclass(frozen=True)
class ControlPlanePlan:
    """How big figure 4 is."""

    jobs: int
    applications_per_job: int
    rate: float
    """Requests per second the load generator offers."""
    seconds: float
    """Measured seconds of each load run."""
    warmup_seconds: float
    repetitions: int
    ticks: int
    backends: tuple[str, ...]
    profile_seconds: float
    """Length of the extra load run under py-spy, when a latency limit is missed."""
    connections: int = 32
    drain_seconds: float = 5.0
    """Requests still unanswered this long after the last one was due are given up."""
    one_at_a_time: int = 1000
    """Requests of the run that sends them one at a time (``run_one_at_a_time``)."""

    def requests_sent(self, seconds: float | None = None) -> int:
        """Requests one load run sends, its warm-up included."""
        measured = self.seconds if seconds is None else seconds
        return round((self.warmup_seconds + measured) * self.rate)

    @property
    def one_at_a_time_drain_seconds(self) -> float:
        """When the one-at-a-time run gives up: at 50 ms a request, far slower than any seen."""
        return self.one_at_a_time * 0.05 + 10

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
    profile_seconds=5,
    one_at_a_time=100,
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
    profile_seconds=10,
)
"""About 3 minutes per store on 2 cores: seeding ~10 s, three load runs of 15 s (2,400 measured
requests each), 1,000 requests one at a time (~5 s), the profiled run when a limit is missed,
and the tick's set-up (Run of every job, the ticks that submit and start them) ~45 s."""


@dataclass(frozen=True)
class Backend:
    """Everything measured on one store."""

    name: str
    seeded: Seeded
    server_start_seconds: float
    idle_rss_mib: float
    loads: list[LoadSummary]
    rss_mib: list[float]
    """The server's RSS after each load run."""
    load_averages: list[float]
    cpu_ms_per_request: list[float]
    """The server's CPU time (user + system) during each load run over the requests it
    answered (warm-up included)."""
    cpu_cores: list[float]
    """The server's CPU time during each load run over the run's wall time."""
    one_at_a_time: LoadSummary
    """The run sending its requests one at a time: its achieved rate is the server's capacity."""
    one_at_a_time_cpu_ms: float
    """The server's CPU time during that run over the requests it answered."""
    ticks: Ticks
    profile: StackProfile | None
    profile_load: LoadSummary | None
    profile_error: str | None


@dataclass(frozen=True)
class Measured:
    plan: ControlPlanePlan
    backends: list[Backend]
    skipped: dict[str, str]
    """Stores not measured, and why (PostgreSQL not installed...)."""


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
    """A store cannot run on this machine."""


@contextlib.contextmanager
def database(name: str, directory: Path) -> Iterator[str]:
    """The SQLAlchemy URL of an empty store: a SQLite file, or a database on a throwaway
    PostgreSQL cluster (the tests' ``PostgresServer``), removed afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    if name == SQLITE:
        yield f"sqlite:///{directory / 'home' / 'streamjobs.db'}"
        return
    from tests.services import PostgresServer, ServiceUnavailableError, find_postgres_bin_dir

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
    manifest = job_manifest("placeholder")
    jobs_file.write_text(json.dumps({"names": seeded.names, "manifest": manifest}))
    loads, rss, load_averages, cpu_per_request, cpu_cores = [], [], [], [], []
    profile = profile_load = profile_error = None
    with ServerProcess(home, database_url=url, supervisor=False) as server:
        idle_rss = server.rss_mib()
        log(f"figure 4: {name}: server up in {server.start_seconds:.1f} s, {idle_rss:.0f} MiB")
        for repetition in range(plan.repetitions):
            load_averages.append(os.getloadavg()[0])
            cpu, wall = server.cpu_seconds(), time.monotonic()
            summary = run_load(server, plan, jobs_file, work, f"load-{repetition + 1}")
            cpu, wall = server.cpu_seconds() - cpu, time.monotonic() - wall
            answered = max(1, plan.requests_sent() - summary.unanswered)
            cpu_per_request.append(cpu * 1000 / answered)
            cpu_cores.append(cpu / wall)
            loads.append(summary)
            rss.append(server.rss_mib())
            log(f"figure 4: {name}: run {repetition + 1}: {describe_load(summary)}")
        cpu = server.cpu_seconds()
        one_at_a_time = run_one_at_a_time(server, plan, jobs_file, work)
        answered = max(1, one_at_a_time.requests - one_at_a_time.unanswered)
        one_at_a_time_cpu_ms = (server.cpu_seconds() - cpu) * 1000 / answered
        log(
            f"figure 4: {name}: one request at a time: {one_at_a_time.achieved_rate:.0f} "
            f"requests/s, {one_at_a_time.errors} errors ({one_at_a_time.unanswered} given up)"
        )
        if missed_latency(plan, loads):
            try:
                profile, profile_load = profile_server(server, plan, jobs_file, work, log)
            except (OSError, SubjectFailed, subprocess.SubprocessError) as failure:
                profile_error = str(failure).splitlines()[0]
                log(f"figure 4: {name}: no py-spy profile: {profile_error}")
    log(f"figure 4: {name}: timing the supervisor's tick over {plan.jobs:,} running jobs")
    ticks = measure_ticks(home, url, seeded.names, ticks=plan.ticks, log=log)
    return Backend(
        name=name,
        seeded=seeded,
        server_start_seconds=server.start_seconds,
        idle_rss_mib=idle_rss,
        loads=loads,
        rss_mib=rss,
        load_averages=load_averages,
        cpu_ms_per_request=cpu_per_request,
        cpu_cores=cpu_cores,
        one_at_a_time=one_at_a_time,
        one_at_a_time_cpu_ms=one_at_a_time_cpu_ms,
        ticks=ticks,
        profile=profile,
        profile_load=profile_load,
        profile_error=profile_error,
    )


def run_load(
    server: ServerProcess,
    plan: ControlPlanePlan,
    jobs_file: Path,
    work: Path,
    name: str,
    *,
    seconds: float | None = None,
) -> LoadSummary:
    """One run of the load generator in its own process; its requests summed up."""
    output = work / f"{name}.json"
    seconds = plan.seconds if seconds is None else seconds
    command = [
        sys.executable,
        "-m",
        "bench.load_generator",
        f"--url={server.url}",
        f"--token-file={server.home / 'admin-token'}",
        f"--jobs-file={jobs_file}",
        f"--rate={plan.rate:g}",
        f"--seconds={seconds:g}",
        f"--warmup-seconds={plan.warmup_seconds:g}",
        f"--connections={plan.connections}",
        f"--drain-seconds={plan.drain_seconds:g}",
        f"--output={output}",
    ]
    environment = {
        "PYTHONPATH": os.pathsep.join([str(REPOSITORY), os.environ.get("PYTHONPATH", "")])
    }
    timeout = plan.warmup_seconds + seconds + 120
    run_subject(name, command, directory=work, environment=environment, timeout=timeout)
    return read_load(output)


def run_one_at_a_time(
    server: ServerProcess, plan: ControlPlanePlan, jobs_file: Path, work: Path
) -> LoadSummary:
    """The load's mix of requests, all scheduled within ``BURST_SECONDS`` and sent over one
    connection, so each waits for the one before to be answered: the rate achieved is what one
    server process answers one request at a time, each request's wait for the store's answers
    (and the client's turn, and the loopback) included."""
    sequential = replace(
        plan,
        rate=plan.one_at_a_time / BURST_SECONDS,
        warmup_seconds=0,
        connections=1,
        drain_seconds=plan.one_at_a_time_drain_seconds,
    )
    return run_load(
        server, sequential, jobs_file, work, "load-one-at-a-time", seconds=BURST_SECONDS
    )


def read_load(path: Path) -> LoadSummary:
    document = json.loads(path.read_text(encoding="utf-8"))
    requests = [Request(*record) for record in document["requests"]]
    return summarise(requests, offered_rate=float(document["rate"]))


def describe_load(summary: LoadSummary) -> str:
    worst = max(summary.routes, key=lambda route: route.p99_ms)
    return (
        f"{summary.achieved_rate:.0f} of {summary.offered_rate:g} requests/s, "
        f"{summary.errors} errors ({summary.unanswered} given up), "
        f"worst p99 {worst.p99_ms:.0f} ms ({worst.route})"
    )


def missed_latency(plan: ControlPlanePlan, loads: list[LoadSummary]) -> bool:
    """Whether a route's median p99 or the median achieved rate misses its limit."""
    from statistics import median

    routes = [route.route for route in loads[0].routes]
    p99s = [median(load.route(route).p99_ms for load in loads) for route in routes]
    rate = median(load.achieved_rate for load in loads)
    return any(not P99_LIMIT.met(p99) for p99 in p99s) or not plan.rate_limit().met(rate)


def py_spy() -> str | None:
    """The py-spy program: beside this Python (the venv's dev extras) or on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def profile_server(
    server: ServerProcess, plan: ControlPlanePlan, jobs_file: Path, work: Path, log: Log
) -> tuple[StackProfile, LoadSummary]:
    """One more load run while py-spy samples the server (100 Hz, the stack of whichever
    thread holds the GIL: where the server's Python spends its CPU); the profile summed up, and
    that run's latencies (py-spy slows the server down)."""
    program = py_spy()
    if program is None:
        raise OSError("py-spy is not installed (pip install py-spy)")
    output = work / "server-profile.txt"
    duration = plan.warmup_seconds + plan.profile_seconds + 2
    command = [
        program,
        "record",
        f"--pid={server.pid}",
        "--rate=100",
        "--gil",
        f"--duration={duration:.0f}",
        "--format=raw",
        f"--output={output}",
    ]
    log(f"figure 4: profiling the server with py-spy for {duration:.0f} s under the same load")
    with (work / "py-spy.err").open("wb") as errors:
        recorder = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=errors, stdin=subprocess.DEVNULL
        )
        try:
            time.sleep(1.0)
            load = run_load(
                server, plan, jobs_file, work, "load-profiled", seconds=plan.profile_seconds
            )
            code = recorder.wait(timeout=duration + 60)
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.wait()
    if code != 0 or not output.exists():
        raise OSError(f"py-spy exited with {code}: {(work / 'py-spy.err').read_text()[-500:]}")
    return read_collapsed(output.read_text(encoding="utf-8")), load
