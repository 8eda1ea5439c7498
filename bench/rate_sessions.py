"""The sessions of the rate -> Parquet job that figures 2 (start-up) and 3 (recovery) read; the
method is in ``bench.figure_startup_recovery``. Both figures share a bench run's sessions.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.output_reader import shared_reader
from bench.rate_pipeline import (
    Commit,
    RatePaths,
    ValueCheck,
    bare_command,
    check_values,
    command_differences,
    job_manifest,
    kill_group,
    last_commit,
    start_bare,
    wait_for_commit,
    wait_until_gone,
)
from bench.server_process import BenchServer, epoch_seconds

RESTART_POLICY = {"type": "Always", "onFailureRetryInterval": 1}
KILL_AFTER_BATCH = 2

STREAMJOBS = "streamjobs"
STANDBY = "standby"
BARE = "bare"
SUBJECTS = (STREAMJOBS, STANDBY, BARE)
INSTANCES = {STREAMJOBS: None, STANDBY: {"standby": True}}


@dataclass(frozen=True)
class RatePlan:
    repetitions: int
    timeout: float = 300.0
    subjects: tuple[str, ...] = SUBJECTS


QUICK = RatePlan(repetitions=1)
LOG = functools.partial(print, flush=True)
FULL = RatePlan(repetitions=3)


@dataclass(frozen=True)
class Session:
    """One subject's session; times are seconds since the epoch."""

    subject: str
    repetition: int
    position: int
    paths: RatePaths
    command: tuple[str, ...]
    load_average: float
    started_at: float
    ready_at: float
    first_commit: Commit
    killed_batch: int
    killed_at: float
    recovered: Commit
    values: ValueCheck | None = None

    @property
    def first_batch_seconds(self) -> float:
        return self.first_commit.at - self.started_at

    @property
    def ready_seconds(self) -> float:
        return self.ready_at - self.started_at

    @property
    def recovery_seconds(self) -> float:
        return self.recovered.at - self.killed_at


@dataclass(frozen=True)
class Measured:
    plan: RatePlan
    sessions: list[Session]
    differences: list[str]

    def of(self, subject: str) -> list[Session]:
        return sorted(
            (s for s in self.sessions if s.subject == subject), key=lambda s: s.repetition
        )

    def samples(self, subject: str, value: Callable[[Session], float]) -> tuple[float, ...]:
        return tuple(value(session) for session in self.of(subject))

    def median(self, subject: str, value: Callable[[Session], float | None]) -> float | None:
        values = [v for v in (value(s) for s in self.of(subject)) if v is not None]
        return statistics.median(values) if values else None


@functools.cache
def measured(quick: bool, work: Path) -> Measured:
    """The sessions of this plan in ``work``, run on the first call and kept for the next."""
    return measure(QUICK if quick else FULL, work)


def schedule(plan: RatePlan) -> Iterator[tuple[int, str, int]]:
    """(repetition, subject, position) in run order: the order reverses every repetition."""
    for repetition in range(plan.repetitions):
        order = plan.subjects if repetition % 2 == 0 else plan.subjects[::-1]
        for position, subject in enumerate(order):
            yield repetition, subject, position


def measure(plan: RatePlan, work: Path, log: Callable[[str], None] = LOG) -> Measured:
    """Run every session with one streamjobs server up throughout, then check the outputs."""
    work.mkdir(parents=True, exist_ok=True)
    sessions = []
    with BenchServer(work / "streamjobs-home", data_root=work / "jobs") as server:
        for repetition, subject, position in schedule(plan):
            paths = RatePaths(work / "jobs" / f"{repetition}-{subject}")
            if subject == BARE:
                session = bare_session(paths, repetition, position, plan)
            else:
                session = supervised_session(server, subject, paths, repetition, position, plan)
            log(
                f"rate sessions: #{repetition + 1} {subject:<10} first batch "
                f"{session.first_batch_seconds:5.1f} s (ready {session.ready_seconds:4.1f} s), "
                f"SIGKILL -> next batch {session.recovery_seconds:5.1f} s"
            )
            sessions.append(session)
    sessions = check_outputs(sessions, work, log)
    commands = {s.subject: s.command for s in sessions if s.command}
    differences = command_differences(commands[BARE], commands[STREAMJOBS])
    return Measured(plan, sessions, differences)


def supervised_session(
    server: BenchServer,
    subject: str,
    paths: RatePaths,
    repetition: int,
    position: int,
    plan: RatePlan,
) -> Session:
    standby = INSTANCES[subject] is not None
    manifest = job_manifest(paths, RESTART_POLICY, INSTANCES[subject])
    load, started_at = load_average(), time.time()
    application = server.run(manifest)
    held: dict[str, Any] = {}
    try:
        first_commit = wait_for_commit(paths.commits, after=-1, timeout=plan.timeout)
        command = () if standby else tuple(server.active_driver().cmdline())
        if standby:
            server.wait_for(application, _standby_ready, "standby", plan.timeout)
            held = server.application(application)["standby"]
        wait_for_commit(paths.commits, after=KILL_AFTER_BATCH - 1, timeout=plan.timeout)
        killed_at = server.kill_driver(held.get("pid"))
        killed_batch = last_commit(paths.commits)
        recovered = wait_for_commit(paths.commits, after=killed_batch, timeout=plan.timeout)
        attempts = {a["number"]: a for a in server.application(application)["attempts"]}
    finally:
        server.call("POST", f"/applications/{application}/abort")
        server.kill_drivers()
    server.wait_for(application, lambda d: d["state"] == "ABORTED", "ABORTED", plan.timeout)
    return Session(
        subject=subject,
        repetition=repetition,
        position=position,
        paths=paths,
        command=command,
        load_average=load,
        started_at=started_at,
        ready_at=_attempt_time(attempts, 1, "runningAt"),
        first_commit=first_commit,
        killed_batch=killed_batch,
        killed_at=killed_at,
        recovered=recovered,
    )


def _standby_ready(document: dict[str, object]) -> bool:
    standby = document.get("standby")
    return isinstance(standby, dict) and standby.get("state") == "ready"


def bare_session(paths: RatePaths, repetition: int, position: int, plan: RatePlan) -> Session:
    command = bare_command(paths)
    load, started_at = load_average(), time.time()
    process = start_bare(command, paths, BARE)
    try:
        alive = _alive(process)
        first_commit = wait_for_commit(paths.commits, after=-1, timeout=plan.timeout, alive=alive)
        wait_for_commit(
            paths.commits, after=KILL_AFTER_BATCH - 1, timeout=plan.timeout, alive=alive
        )
        killed_at = time.time()
        kill_group(process, wait_for_all=False)
        killed_batch = last_commit(paths.commits)
        killed, process = process, start_bare(command, paths, f"{BARE}-restarted")
        recovered = wait_for_commit(
            paths.commits, after=killed_batch, timeout=plan.timeout, alive=_alive(process)
        )
        wait_until_gone(killed.pid)
    finally:
        kill_group(process)
    return Session(
        subject=BARE,
        repetition=repetition,
        position=position,
        paths=paths,
        command=command.argv,
        load_average=load,
        started_at=started_at,
        ready_at=runner_event_time(paths.directory / f"{BARE}.out", "driver"),
        first_commit=first_commit,
        killed_batch=killed_batch,
        killed_at=killed_at,
        recovered=recovered,
    )


def check_outputs(sessions: list[Session], work: Path, log: Callable[[str], None]) -> list[Session]:
    """Every session with the check of its output's values (the bench's output reader)."""
    found = shared_reader({}, work).values("value", [session.paths.output for session in sessions])
    checked = [
        dataclasses.replace(session, values=check_values(found[str(session.paths.output)]))
        for session in sessions
    ]
    lost = sum(s.values.lost for s in checked if s.values)
    duplicated = sum(s.values.duplicated for s in checked if s.values)
    log(f"rate sessions: outputs checked: {lost} records lost, {duplicated} duplicated")
    return checked


def runner_event_time(stdout: Path, kind: str) -> float:
    """When the runner printed its first event of ``kind`` (its JSON lines on stdout)."""
    for line in stdout.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line) if line.startswith("{") else None
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == kind:
            moment = epoch_seconds(str(event["timestamp"]))
            if moment is not None:
                return moment
    raise RuntimeError(f"{stdout} has no {kind!r} event")


def load_average() -> float:
    return os.getloadavg()[0]


def _attempt_time(attempts: dict[int, dict[str, Any]], number: int, field: str) -> float:
    value = attempts.get(number, {}).get(field)
    moment = epoch_seconds(value) if isinstance(value, str) else None
    if moment is None:
        raise RuntimeError(f"attempt {number} has no {field}: {attempts}")
    return moment


def _alive(process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: process.poll() is None
