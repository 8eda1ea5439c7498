"""Run a benchmark subject as a child process, timed, with its output kept in files.

Each subject (the streamjobs runner, a hand-written baseline) runs in its own process and its own
JVM, in a new session so that a timeout can stop the whole group. Its standard output and error go
to ``<name>.out`` and ``<name>.err`` in the run's directory, to be parsed and, on failure, quoted.

A PySpark program's JVM is its child, in its process group, and may outlive it: when the Python
process exits without stopping its session, the JVM still runs its shutdown hooks (which finish the
event log). A subject counts as finished when its whole process group is gone.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ERROR_TAIL_LINES = 30
GROUP_POLL_SECONDS = 0.05


class SubjectFailed(RuntimeError):
    """A subject exited non-zero or ran out of time; the message ends with its stderr."""


@dataclass(frozen=True)
class Finished:
    """A subject that exited 0: how long its process lived and where its output is."""

    seconds: float
    stdout: Path
    stderr: Path
    child_cpu_seconds: float = 0.0
    """CPU time (user + system) of the subject's own process and of the children it waited for
    (``RUSAGE_CHILDREN``); a PySpark driver does not wait for its JVM, which is not counted."""


def run_subject(
    name: str,
    command: Sequence[str],
    *,
    directory: Path,
    environment: Mapping[str, str] | None = None,
    timeout: float = 900.0,
) -> Finished:
    """Run ``command`` in ``directory`` and wait for it; raise SubjectFailed unless it exits 0."""
    stdout, stderr = directory / f"{name}.out", directory / f"{name}.err"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, **(environment or {})}
    started, cpu_before = time.monotonic(), children_cpu_seconds()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            list(command),
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=timeout)
            _wait_for_group(process.pid, deadline=started + timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise SubjectFailed(
                f"{name} ran longer than {timeout:.0f}s\n{stderr_tail(stderr)}"
            ) from None
    seconds = time.monotonic() - started
    if code != 0:
        raise SubjectFailed(f"{name} exited with code {code}\n{stderr_tail(stderr)}")
    cpu = children_cpu_seconds() - cpu_before
    return Finished(seconds=seconds, stdout=stdout, stderr=stderr, child_cpu_seconds=cpu)


def children_cpu_seconds() -> float:
    """CPU seconds of every child this process has waited for so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wait_for_group(group: int, *, deadline: float) -> None:
    """Wait until no process is left in process group ``group`` (the subject's JVM included)."""
    while _group_alive(group):
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(cmd=f"process group {group}", timeout=0)
        time.sleep(GROUP_POLL_SECONDS)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def stderr_tail(path: Path) -> str:
    """The last lines of a subject's error output, to quote when it failed."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join([f"last lines of {path}:", *lines[-ERROR_TAIL_LINES:]])
