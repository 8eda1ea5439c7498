"""Figure 4's store: jobs and finished applications seeded through streamjobs' own services,
and the supervisor's tick timed over every job running (a fake launcher and clock, as tests do).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

from sqlalchemy import insert, update

from bench.processes import log
from streamjobs.composition import Server, build_server
from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.launch.base import AttemptSpec, DriverHandle
from streamjobs.launch.fake import FakeDriver, FakeLauncher
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from streamjobs.store.tables import ApplicationRow, JobRow
from streamjobs.supervisor.loop import Supervisor

ADMIN = Actor(Principal("admin", is_admin=True), source="bench")
APPLICATION_MINUTES = 10
FINISHED = {  # what every seeded application shares: it ran once, reported, and completed
    "state": "COMPLETED",
    "triggered_by": ADMIN.name,
    "run_as": ADMIN.name,
    "submission_attempts": 1,
    "execution_attempts": 1,
    "driver_state": "EXITED",
    "exit_code": 0,
    "latest": {"inputRowsPerSecond": 10.0, "processedRowsPerSecond": 10.0, "batchId": 119},
    "version": 4,
}


def job_manifest(name: str) -> dict[str, Any]:
    """A small pipeline job, the same for every job but its name (and no output location, since
    two jobs may not write one), so the load generator can apply any job's manifest unchanged."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {
            "name": name,
            "description": "figure 4: one of many stored jobs",
            "tags": {"team": "bench", "purpose": "control-plane"},
        },
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": {"triggerMode": "ProcessingTime", "triggerDuration": "5 seconds"},
                "inputs": [{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 10}}],
                "steps": [
                    {
                        "sequence": [
                            {"name": "evens", "sql": "SELECT * FROM ticks WHERE value % 2 = 0"}
                        ]
                    }
                ],
                "outputs": [{"name": "evens", "format": "console"}],
            },
            "restartPolicy": {"type": "OnFailure"},
        },
    }


@dataclass(frozen=True)
class Seeded:
    """What ``seed`` stored, and how long it took."""

    names: list[str]
    applications: int
    jobs_seconds: float
    applications_seconds: float


def open_store(home: Path, database_url: str, clock: FakeClock | None = None) -> Server:
    """The server the figure measures, built as ``streamjobs server`` builds it: with a fake
    launcher and a supervisor the bench ticks itself when given ``clock``, else without one."""
    settings = Settings(
        home=home, database_url=database_url, supervisor=False, public_url="http://127.0.0.1:1"
    )
    if clock is None:
        return build_server(settings)
    return build_server(
        settings,
        clock=clock,
        launchers={Deployment.SINGLE_NODE: IndexedFakeLauncher()},
        supervise=True,
        executor_reader=lambda handle: None,
    )


def seed(home: Path, database_url: str, *, jobs: int, applications_per_job: int) -> Seeded:
    """Bootstrap the admin, create ``jobs`` jobs and ``applications_per_job`` finished
    applications of each; the admin's token is also written to ``home/admin-token``."""
    services = open_store(home, database_url).services
    try:
        token = services.identity.bootstrap_admin().token
        if token is None:
            raise RuntimeError(f"the store at {database_url} already has an admin")
        (home / "admin-token").write_text(token, encoding="utf-8")
        names = [f"bench-job-{index:05d}" for index in range(jobs)]
        started = time.monotonic()
        for name in names:
            services.jobs.create(job_manifest(name), actor=ADMIN)
        jobs_seconds = time.monotonic() - started
        log(f"figure 4: created {jobs:,} jobs in {jobs_seconds:.1f} s")
        started = time.monotonic()
        count = _insert_applications(services, names, applications_per_job)
        applications_seconds = time.monotonic() - started
        log(f"figure 4: stored {count:,} finished applications in {applications_seconds:.1f} s")
        _settle(services)
    finally:
        services.store.close()
    return Seeded(names, count, jobs_seconds, applications_seconds)


def _settle(services: Services) -> None:
    """On PostgreSQL, VACUUM ANALYZE the freshly seeded tables."""
    engine = services.store.engine
    if engine.dialect.name != "postgresql":
        return
    engine.dispose()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("VACUUM ANALYZE")
        # measured: only a second pass marks the new rows' pages all-visible, which is what
        # lets a count read the index alone
        connection.exec_driver_sql("VACUUM")


def _insert_applications(services: Services, names: list[str], per_job: int) -> int:
    root = services.settings.resolved_checkpoint_root
    now = datetime.now(UTC)
    first = now - timedelta(minutes=APPLICATION_MINUTES * (len(names) * per_job + 1))
    rows = []
    with services.store.transaction() as repos:
        manifests = {name: repos.jobs.get(name).manifest for name in names}
    for job_index, name in enumerate(names):
        job = parse_manifest(manifests[name], checkpoint_root=root)
        snapshot = resolved_template(job, checkpoint_root=root)
        for run in range(1, per_job + 1):
            order = run * len(names) + job_index  # the jobs' runs interleave in time
            created = first + timedelta(minutes=APPLICATION_MINUTES * order)
            ended = created + timedelta(minutes=APPLICATION_MINUTES)
            rows.append(
                {
                    **FINISHED,
                    "id": f"app-{uuid4().hex[:12]}",
                    "name": f"{name}-{run}",
                    "run_number": run,
                    "job_name": name,
                    "namespace": snapshot["metadata"].get("namespace", "default"),
                    "bundle": snapshot["spec"].get("bundle", "default"),
                    "tags": dict(snapshot["metadata"].get("tags") or {}),
                    "spec": snapshot,
                    "created_at": created,
                    "running_since": created,
                    "transition_time": ended,
                    "last_update_time": ended,
                    "last_heartbeat_at": ended,
                }
            )
    with services.store.engine.begin() as connection:
        connection.execute(insert(ApplicationRow.__table__), rows)
        connection.execute(
            update(JobRow.__table__).where(JobRow.name.in_(names)).values(status="COMPLETED")
        )
    return len(rows)


class IndexedFakeLauncher(FakeLauncher):
    """``FakeLauncher`` with its drivers also indexed by pid, so that finding one is O(1)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_pid: dict[int, FakeDriver] = {}

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        handle = super().submit(attempt)
        self._by_pid[handle.pid] = self.drivers[-1]
        return handle

    def _driver(self, handle: DriverHandle) -> FakeDriver:
        return self._by_pid[handle.pid]


@dataclass(frozen=True)
class Ticks:
    """How long the supervisor's ticks took over ``live`` running applications, in ms."""

    live: int
    runs_seconds: float
    submit_ms: float
    running_ms: float
    steady_ms: tuple[float, ...]


def measure_ticks(home: Path, database_url: str, names: list[str], *, ticks: int) -> Ticks:
    """Run every named job and time the supervisor's ticks once all of them are RUNNING."""
    clock = FakeClock(datetime.now(UTC))
    server = open_store(home, database_url, clock)
    services, supervisor = server.services, server.supervisor
    try:
        launcher = services.launchers[Deployment.SINGLE_NODE]
        assert isinstance(launcher, IndexedFakeLauncher)
        assert supervisor is not None
        started = time.monotonic()
        for name in names:
            services.applications.run(name, actor=ADMIN)
        runs_seconds = time.monotonic() - started
        submit_ms = _tick_ms(supervisor)
        if len(launcher.live) != len(names):
            raise RuntimeError(f"{len(launcher.live)} drivers started for {len(names)} jobs")
        for driver in launcher.drivers:
            attempt = driver.attempt
            assert attempt.report_token is not None
            heartbeat = [{"sequence": 0, "type": "heartbeat"}]
            services.reports.receive(attempt.application_id, attempt.report_token, heartbeat)
        clock.advance(1)
        running_ms = _tick_ms(supervisor)
        with services.store.transaction() as repos:
            states = [application.state for application in repos.applications.supervised()]
        if (running := states.count("RUNNING")) != len(names):
            raise RuntimeError(f"{running} of {len(names)} applications RUNNING: {set(states)}")
        steady = []
        for _ in range(ticks):
            clock.advance(1)
            steady.append(_tick_ms(supervisor, steady=True))
        log(
            f"figure 4: tick over {len(names):,} live applications: "
            f"{', '.join(f'{ms:.0f}' for ms in steady)} ms (submitting them: {submit_ms:.0f} ms)"
        )
        return Ticks(len(names), runs_seconds, submit_ms, running_ms, tuple(steady))
    finally:
        services.store.close()


def _tick_ms(supervisor: Supervisor, *, steady: bool = False) -> float:
    """The wall time of one tick in ms; a steady tick must find nothing to do."""
    started = time.perf_counter()
    actions = supervisor.run_once()
    took = (time.perf_counter() - started) * 1000
    if steady and actions:
        raise RuntimeError(f"a steady tick acted: {actions[:3]}")
    return took
