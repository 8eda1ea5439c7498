"""Run a benchmark subject as a child process, timed, with its output kept in files."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ERROR_TAIL_LINES = 30
GROUP_POLL_SECONDS = 0.05


class SubjectFailed(RuntimeError):
    """A subject exited non-zero or ran out of time; the message ends with its stderr."""


@dataclass(frozen=True)
class Finished:
    """A subject that exited 0: how long its process group lived and where its output is."""

    seconds: float
    stdout: Path
    stderr: Path


def run_subject(
    name: str,
    command: Sequence[str],
    *,
    directory: Path,
    environment: Mapping[str, str] | None = None,
    timeout: float = 900.0,
    watch: Callable[[subprocess.Popen[bytes]], None] | None = None,
    interval: float = GROUP_POLL_SECONDS,
) -> Finished:
    """Run ``command`` in ``directory`` until its whole group has exited, calling ``watch``
    every ``interval`` seconds meanwhile; SubjectFailed unless it exits 0 in time."""
    stdout, stderr = directory / f"{name}.out", directory / f"{name}.err"
    env = {"PYSPARK_PYTHON": sys.executable, **(environment or {})}
    started = time.monotonic()
    process = start(command, directory, env, stdout, stderr)
    while process.poll() is None or group_alive(process.pid):
        if watch is not None:
            watch(process)
        if time.monotonic() - started > timeout:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise SubjectFailed(f"{name} ran longer than {timeout:.0f}s\n{stderr_tail(stderr)}")
        time.sleep(interval)
    if process.returncode != 0:
        raise SubjectFailed(f"{name} exited with code {process.returncode}\n{stderr_tail(stderr)}")
    return Finished(time.monotonic() - started, stdout, stderr)


def start(
    command: Sequence[str], directory: Path, environment: Mapping[str, str], out: Path, err: Path
) -> subprocess.Popen[bytes]:
    """Start ``command`` in its own session (and process group), its output into two files."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        return subprocess.Popen(
            list(command),
            cwd=directory,
            env={**os.environ, **environment},
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def stderr_tail(path: Path) -> str:
    """The last lines of a subject's error output, to quote when it failed."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join([f"last lines of {path}:", *lines[-ERROR_TAIL_LINES:]])
