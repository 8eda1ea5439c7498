"""Sessions of the rate -> parquet pipeline, which figures 2 (start-up) and 3 (recovery) read.

A session runs one subject from a fresh checkpoint and output:

1. start: streamjobs gets ``POST /api/v1/jobs/{job}/run`` on a server already up; the bare
   baseline's ``spark-submit`` is started. The clock starts just before either.
2. first batch: ``commits/0`` appears (figure 2). streamjobs' RUNNING is read afterwards from
   its first attempt (``runningAt``), so the harness does not poll the server meanwhile.
3. when batch 2 is committed, the driver is SIGKILLed: streamjobs' JVM and Python (the children
   of the wrapper, as a crash would leave it, ``restartPolicy: Always`` with
   ``onFailureRetryInterval: 1``), or the bare driver's whole process group, started again with
   the same command as soon as the killed JVM has exited (a cold restart from the same
   checkpoint, as a shell loop would do it).
4. recovery: the first commit of a batch after the last one committed before the kill
   (figure 3); then the session ends (abort + SIGKILL, bare: SIGKILL).

After every session, one Spark process lists the values each output holds, to count lost and
duplicated records. Subjects alternate, streamjobs first. When a bench run asks for both
figures, the sessions run once (``measured`` keeps them per scratch directory), which halves
the Spark start-ups the two figures cost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.output_reader import shared_reader
from bench.rate_pipeline import (
    JOB,
    Commit,
    RatePaths,
    ValueCheck,
    bare_command,
    check_values,
    command_differences,
    job_manifest,
    kill_group,
    kill_leader,
    last_commit,
    start_bare,
    wait_for_commit,
    wait_until_gone,
    write_manifest,
)
from bench.shared_measurements import SharedMeasurements
from bench.streamjobs_server import BenchServer, epoch_seconds

RESTART_POLICY = {"type": "Always", "onFailureRetryInterval": 1}
KILL_AFTER_BATCH = 2
"""The driver is killed once this batch is committed (three batches, 0-2)."""

STREAMJOBS = "streamjobs"
BARE = "bare"
SUBJECTS = (STREAMJOBS, BARE)

Log = Callable[[str], None]


@dataclass(frozen=True)
class RatePlan:
    repetitions: int
    timeout: float = 300.0
    """Seconds any one wait (a commit, a state) may take before the bench gives up."""


QUICK = RatePlan(repetitions=1)
FULL = RatePlan(repetitions=3)
"""Three pairs of sessions, about 70 s a pair on 2 cores: with four, the full run took 20-21
minutes on a slow day, past its 20."""


@dataclass(frozen=True)
class Session:
    """One subject's session; times are seconds since the epoch."""

    subject: str
    repetition: int
    first: bool
    paths: RatePaths
    command: tuple[str, ...]
    """What ran the driver (streamjobs: the wrapper and its spark-submit, as the process list
    shows them)."""
    load_average: float
    started_at: float
    submitted_at: float
    """streamjobs: when the supervisor started the driver; bare: ``started_at``."""
    ready_at: float
    """streamjobs: RUNNING (the first attempt's ``runningAt``); bare: the runner's ``driver``
    line (its Spark session is up), which is the report RUNNING waits for."""
    first_commit: Commit
    killed_batch: int
    """The last batch committed before the kill."""
    killed_at: float
    gone_at: float
    """When the killed processes were gone (bare: the killed spark-submit, i.e. its JVM)."""
    restarted_at: float
    """streamjobs: the second attempt's submission; bare: the second spark-submit's start."""
    recovered: Commit
    detected_at: float | None = None
    """streamjobs: when the supervisor saw the driver exit (the first attempt's ``endedAt``)."""
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
    """How streamjobs' spark-submit command differed from the bare one."""

    def of(self, subject: str) -> list[Session]:
        return sorted(
            (s for s in self.sessions if s.subject == subject), key=lambda s: s.repetition
        )

    def samples(self, subject: str, value: Callable[[Session], float]) -> tuple[float, ...]:
        """``value`` of each of the subject's sessions, in repetition order."""
        return tuple(value(session) for session in self.of(subject))

    def median(self, subject: str, value: Callable[[Session], float]) -> float:
        return statistics.median(self.samples(subject, value))


def measured(quick: bool, work: Path, log: Log = print) -> Measured:
    """The sessions of this plan in ``work``, run on the first call and kept for the next."""
    return _SESSIONS.get(QUICK if quick else FULL, work, log)


def schedule(plan: RatePlan) -> Iterator[tuple[int, str, bool]]:
    """(repetition, subject, first) in run order: streamjobs first, then alternating."""
    for repetition in range(plan.repetitions):
        order = SUBJECTS if repetition % 2 == 0 else SUBJECTS[::-1]
        for position, subject in enumerate(order):
            yield repetition, subject, position == 0


def measure(plan: RatePlan, work: Path, log: Log = print) -> Measured:
    """Run every session with one streamjobs server up throughout, then check the outputs."""
    work.mkdir(parents=True, exist_ok=True)
    sessions = []
    with BenchServer(work / "streamjobs-home", data_root=work / "jobs") as server:
        for repetition, subject, first in schedule(plan):
            paths = RatePaths(work / "jobs" / f"{repetition}-{subject}")
            if subject == STREAMJOBS:
                session = streamjobs_session(server, paths, repetition, first, plan)
            else:
                session = bare_session(paths, repetition, first, plan)
            log(
                f"rate sessions: #{repetition + 1} {subject:<10} first batch "
                f"{session.first_batch_seconds:5.1f} s (ready {session.ready_seconds:4.1f} s), "
                f"SIGKILL -> next batch {session.recovery_seconds:5.1f} s"
            )
            sessions.append(session)
    sessions = check_outputs(sessions, work, log)
    bare = next(s for s in sessions if s.subject == BARE)
    supervised = next(s for s in sessions if s.subject == STREAMJOBS)
    return Measured(plan, sessions, command_differences(bare.command, supervised.command))


_SESSIONS = SharedMeasurements("rate sessions", measure)


def streamjobs_session(
    server: BenchServer, paths: RatePaths, repetition: int, first: bool, plan: RatePlan
) -> Session:
    server.put_job(job_manifest(paths, RESTART_POLICY))
    load = load_average()
    started_at = time.time()
    application = server.run(JOB)
    try:
        first_commit = wait_for_commit(paths.commits, after=-1, timeout=plan.timeout)
        (wrapper,) = server.drivers()
        command = tuple(wrapper.cmdline())
        wait_for_commit(paths.commits, after=KILL_AFTER_BATCH - 1, timeout=plan.timeout)
        killed_at, _ = server.kill_driver()
        gone_at = time.time()
        killed_batch = last_commit(paths.commits)
        recovered = wait_for_commit(paths.commits, after=killed_batch, timeout=plan.timeout)
        attempts = server.application(application)["attempts"]
    finally:
        server.abort(application)
        server.kill_drivers()
    server.wait_for_state(application, "ABORTED", timeout=plan.timeout)
    return Session(
        subject=STREAMJOBS,
        repetition=repetition,
        first=first,
        paths=paths,
        command=command,
        load_average=load,
        started_at=started_at,
        submitted_at=_attempt_time(attempts, 0, "submittedAt"),
        ready_at=_attempt_time(attempts, 0, "runningAt"),
        first_commit=first_commit,
        killed_batch=killed_batch,
        killed_at=killed_at,
        gone_at=gone_at,
        restarted_at=_attempt_time(attempts, 1, "submittedAt"),
        recovered=recovered,
        detected_at=_attempt_time(attempts, 0, "endedAt"),
    )


def bare_session(paths: RatePaths, repetition: int, first: bool, plan: RatePlan) -> Session:
    write_manifest(paths)
    command = bare_command(paths)
    load = load_average()
    started_at = time.time()
    process = start_bare(command, paths, BARE)
    try:
        first_commit = wait_for_commit(
            paths.commits, after=-1, timeout=plan.timeout, alive=_alive(process)
        )
        wait_for_commit(
            paths.commits, after=KILL_AFTER_BATCH - 1, timeout=plan.timeout, alive=_alive(process)
        )
        killed_at = time.time()
        kill_leader(process)
        gone_at = time.time()
        killed_batch = last_commit(paths.commits)
        restarted_at = time.time()
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
        first=first,
        paths=paths,
        command=command.argv,
        load_average=load,
        started_at=started_at,
        submitted_at=started_at,
        ready_at=runner_event_time(paths.directory / f"{BARE}.out", "driver"),
        first_commit=first_commit,
        killed_batch=killed_batch,
        killed_at=killed_at,
        gone_at=gone_at,
        restarted_at=restarted_at,
        recovered=recovered,
    )


def check_outputs(sessions: list[Session], work: Path, log: Log) -> list[Session]:
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
        if not line.startswith("{"):
            continue
        with contextlib.suppress(json.JSONDecodeError):
            event = json.loads(line)
            if isinstance(event, dict) and event.get("type") == kind:
                moment = epoch_seconds(str(event["timestamp"]))
                if moment is not None:
                    return moment
    raise RuntimeError(f"{stdout} has no {kind!r} event")


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def _attempt_time(attempts: list[dict[str, object]], index: int, field: str) -> float:
    value = attempts[index].get(field) if index < len(attempts) else None
    moment = epoch_seconds(value) if isinstance(value, str) else None
    if moment is None:
        raise RuntimeError(f"attempt {index + 1} has no {field}: {attempts}")
    return moment


def _alive(process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: process.poll() is None
