"""Run a benchmark subject as a child process, timed, with its output kept in files in the
directory of its run; and the harness's progress lines."""

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
HARNESS_PATH = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}  # bench.* processes


class SubjectFailed(RuntimeError):
    """A subject exited non-zero or ran out of time; the message ends with its stderr."""


@dataclass(frozen=True)
class RunPaths:
    """Where one run keeps its manifest, output, checkpoint, event log and process output."""

    directory: Path

    @property
    def manifest(self) -> Path:
        return self.directory / "job.yaml"

    @property
    def output(self) -> Path:
        return self.directory / "output"

    @property
    def checkpoint(self) -> Path:
        return self.directory / "checkpoint"

    @property
    def event_log(self) -> Path:
        return self.directory / "eventlog"


def run_subject(
    name: str,
    command: Sequence[str],
    *,
    directory: Path,
    environment: Mapping[str, str] | None = None,
    timeout: float = 900.0,
    watch: Callable[[subprocess.Popen[bytes]], None] | None = None,
    interval: float = GROUP_POLL_SECONDS,
) -> float:
    """Run ``command`` in ``directory`` (output in ``<name>.out`` and ``.err``) until its whole
    group has exited, calling ``watch`` every ``interval`` seconds meanwhile; the seconds from its
    start until then. SubjectFailed unless it exits 0 in time."""
    stderr = directory / f"{name}.err"
    env = {"PYSPARK_PYTHON": sys.executable, **(environment or {})}
    started = time.monotonic()
    process = start(command, directory, env, directory / f"{name}.out", stderr)
    while process.poll() is None or group_alive(process.pid):
        if watch is not None:
            watch(process)
        if time.monotonic() - started > timeout:
            signal_group(process.pid)
            process.wait()
            raise SubjectFailed(f"{name} ran longer than {timeout:.0f}s\n{stderr_tail(stderr)}")
        time.sleep(interval)
    if process.returncode != 0:
        raise SubjectFailed(f"{name} exited with code {process.returncode}\n{stderr_tail(stderr)}")
    return time.monotonic() - started


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


def signal_group(group: int, signal_number: int = signal.SIGKILL) -> None:
    """Signal every process of a group, if any is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal_number)


def wait_until_gone(group: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while group_alive(group):
        if time.monotonic() > deadline:
            raise RuntimeError(f"process group {group} still alive {timeout:g} s after SIGKILL")
        time.sleep(GROUP_POLL_SECONDS)


def log(message: str) -> None:
    """A line of the harness's progress, shown as it happens."""
    print(message, flush=True)


def stderr_tail(path: Path) -> str:
    """The last lines of a subject's error output, to quote when it failed."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join([f"last lines of {path}:", *lines[-ERROR_TAIL_LINES:]])
