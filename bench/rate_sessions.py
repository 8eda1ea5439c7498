"""The sessions of the rate -> Parquet job that figures 2 (start-up) and 3 (recovery) share: one
bench run's sessions serve both. Each subject's session starts the job, waits for its first
committed batch, SIGKILLs its active driver and times the way back to the next one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.output_reader import column_values
from bench.processes import log, wait_until_gone
from bench.progress import runner_events
from bench.rate_pipeline import (
    Commit,
    RatePaths,
    ValueCheck,
    bare_command,
    check_values,
    command_differences,
    commit_ids,
    job_manifest,
    kill_group,
    start_bare,
    wait_for_commit,
)
from bench.server_process import BenchServer, epoch_seconds

RESTART_POLICY = {"type": "Always", "onFailureRetryInterval": 1}
KILL_AFTER_BATCH = 2
QUICK_REPETITIONS = 1
FULL_REPETITIONS = 3

STREAMJOBS = "streamjobs"
STANDBY = "standby"
BARE = "bare"
SUBJECTS = (STREAMJOBS, STANDBY, BARE)


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
    repetitions: int
    sessions: list[Session]
    differences: list[str]

    def samples(self, subject: str, value: Callable[[Session], float]) -> tuple[float, ...]:
        """``value`` of the subject's sessions, in repetition order (the order they ran in)."""
        return tuple(value(session) for session in self.sessions if session.subject == subject)


def schedule(repetitions: int) -> Iterator[tuple[int, str, int]]:
    """(repetition, subject, position) in run order: the order reverses every repetition."""
    for repetition in range(repetitions):
        order = SUBJECTS if repetition % 2 == 0 else SUBJECTS[::-1]
        for position, subject in enumerate(order):
            yield repetition, subject, position


@functools.cache
def measure(repetitions: int, work: Path) -> Measured:
    """Run every session with one streamjobs server up throughout, then check the outputs; on
    the first call, kept for the other figure."""
    work.mkdir(parents=True, exist_ok=True)
    sessions = []
    with BenchServer(work / "streamjobs-home", data_root=work / "jobs") as server:
        for repetition, subject, position in schedule(repetitions):
            paths = RatePaths(work / "jobs" / f"{repetition}-{subject}")
            if subject == BARE:
                session = bare_session(paths, repetition, position)
            else:
                session = supervised_session(server, subject, paths, repetition, position)
            log(
                f"rate sessions: #{repetition + 1} {subject:<10} first batch "
                f"{session.first_batch_seconds:5.1f} s (ready {session.ready_seconds:4.1f} s), "
                f"SIGKILL -> next batch {session.recovery_seconds:5.1f} s"
            )
            sessions.append(session)
    sessions = check_outputs(sessions, work)
    commands = {s.subject: s.command for s in sessions if s.command}
    differences = command_differences(commands[BARE], commands[STREAMJOBS])
    return Measured(repetitions, sessions, differences)


def supervised_session(
    server: BenchServer, subject: str, paths: RatePaths, repetition: int, position: int
) -> Session:
    standby = subject == STANDBY
    manifest = job_manifest(paths, RESTART_POLICY, {"standby": True} if standby else None)
    load, started_at = os.getloadavg()[0], time.time()
    application = server.run(manifest)
    held: dict[str, Any] = {}
    try:
        first_commit = wait_for_commit(paths.commits, after=-1)
        command = () if standby else tuple(server.active_driver().cmdline())
        if standby:
            standby_ready = lambda d: (d.get("standby") or {}).get("state") == "ready"  # noqa: E731
            held = server.wait_for(application, standby_ready, "standby")["standby"]
        wait_for_commit(paths.commits, after=KILL_AFTER_BATCH - 1)
        killed_at = server.kill_driver(held.get("pid"))
        killed_batch = max(commit_ids(paths.commits), default=-1)
        recovered = wait_for_commit(paths.commits, after=killed_batch)
        document = server.call("GET", f"/applications/{application}")
        attempts = {attempt["number"]: attempt for attempt in document["attempts"]}
    finally:
        server.call("POST", f"/applications/{application}/abort")
        server.kill_drivers()
    server.wait_for(application, lambda d: d["state"] == "ABORTED", "ABORTED")
    running_at = attempts.get(1, {}).get("runningAt")
    if not isinstance(running_at, str):
        raise RuntimeError(f"attempt 1 has no runningAt: {attempts}")
    return Session(
        subject=subject,
        repetition=repetition,
        position=position,
        paths=paths,
        command=command,
        load_average=load,
        started_at=started_at,
        ready_at=epoch_seconds(running_at),
        first_commit=first_commit,
        killed_batch=killed_batch,
        killed_at=killed_at,
        recovered=recovered,
    )


def bare_session(paths: RatePaths, repetition: int, position: int) -> Session:
    command = bare_command(paths)
    load, started_at = os.getloadavg()[0], time.time()
    process = start_bare(command, paths, BARE)

    def alive() -> bool:  # the restarted process once there is one
        return process.poll() is None

    try:
        first_commit = wait_for_commit(paths.commits, after=-1, alive=alive)
        wait_for_commit(paths.commits, after=KILL_AFTER_BATCH - 1, alive=alive)
        killed_at = time.time()
        kill_group(process, wait_for_all=False)
        killed_batch = max(commit_ids(paths.commits), default=-1)
        killed, process = process, start_bare(command, paths, f"{BARE}-restarted")
        recovered = wait_for_commit(paths.commits, after=killed_batch, alive=alive)
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


def check_outputs(sessions: list[Session], work: Path) -> list[Session]:
    """Every session with the check of its output's values (the bench's output reader)."""
    found = column_values("value", [session.paths.output for session in sessions], work)
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
    for event in runner_events(stdout):
        if event.get("type") == kind:
            return epoch_seconds(str(event["timestamp"]))
    raise RuntimeError(f"{stdout} has no {kind!r} event")
