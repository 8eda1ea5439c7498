"""Run a subject while sampling the resident memory of its process tree, JVM and Python apart.

A PySpark driver is a Python process with its JVM as a child (started by ``spark-submit``'s
launcher, in the same process group). Every ``interval`` seconds the sampler reads the RSS of
every process of the subject's tree — the ones it knew stay watched after their parent exits, as
a JVM may outlive its Python — and sums it by kind: ``java`` processes, Python ones, others (the
launcher's shell). A process's kind is read anew at every sample: ``spark-class`` is a shell
that becomes the driver's JVM by ``exec``, keeping its pid. The sampler also keeps each
process's kernel high-water mark (``VmHWM`` in ``/proc/<pid>/status``, read while it lives),
against which a 100 ms sampler may miss a short peak. A child with its parent's command line is
a fork that has not yet exec'd (a JVM starting a program): its pages are its parent's, so it is
not counted a second time.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.processes import Finished, SubjectFailed, children_cpu_seconds, stderr_tail

JVM = "jvm"
PYTHON = "python"
OTHER = "other"
KINDS = (JVM, PYTHON, OTHER)
MIB = 1024 * 1024
MAIN_CLASS = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_$][\w$]*)+")


@dataclass(frozen=True)
class ProcessRss:
    """One process's RSS in a sample: its pid, kind, what it runs (a JVM's main class, else the
    program), in bytes."""

    pid: int
    kind: str
    label: str
    rss: int


@dataclass(frozen=True)
class Sample:
    """The tree's RSS at one moment, in bytes by kind; ``at`` in seconds from the start."""

    at: float
    rss: Mapping[str, int]
    processes: tuple[ProcessRss, ...] = ()
    """Each process of the sample, so a peak can be taken apart."""

    @property
    def total(self) -> int:
        return sum(self.rss.values())


@dataclass(frozen=True)
class TreeMemory:
    """A subject's memory over its life."""

    samples: tuple[Sample, ...]
    high_water: Mapping[str, int]
    """The largest peak RSS (VmHWM) of any one process of each kind, in bytes: the driver's JVM
    and its Python process, not the short-lived launcher JVM that ``spark-submit`` runs first."""
    seconds: float

    def peak_mib(self, kind: str) -> float:
        """The highest sampled RSS of the kind's processes together, in MiB."""
        return max((sample.rss.get(kind, 0) for sample in self.samples), default=0) / MIB

    @property
    def peak_total_mib(self) -> float:
        return max((sample.total for sample in self.samples), default=0) / MIB

    def high_water_mib(self, kind: str) -> float:
        return self.high_water.get(kind, 0) / MIB

    def peak_sample(self, kind: str) -> Sample | None:
        """The sample with the highest RSS of the kind's processes together."""
        return max(self.samples, key=lambda sample: sample.rss.get(kind, 0), default=None)


def kind_of(name: str, command: Sequence[str]) -> str:
    """JVM, Python or other, from a process's name and command line."""
    program = os.path.basename(command[0]) if command else name
    if name == "java" or program == "java":
        return JVM
    if name.startswith("python") or program.startswith("python"):
        return PYTHON
    return OTHER


def label_of(name: str, command: Sequence[str]) -> str:
    """What a process runs: a JVM's main class (or ``-jar`` file), else its program's name."""
    if kind_of(name, command) != JVM:
        return os.path.basename(command[0]) if command else name
    for previous, argument in itertools.pairwise(command):
        if previous == "-jar":
            return os.path.basename(argument)
        class_path = previous in ("-cp", "-classpath", "--class-path")
        if not class_path and MAIN_CLASS.fullmatch(argument):
            return argument
    return "java"


def high_water_bytes(status: str) -> int:
    """``VmHWM`` of a ``/proc/<pid>/status`` text, in bytes (0 when absent)."""
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) >= 2 and parts[1].isdigit() else 0
    return 0


def largest_high_water(processes: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(kind, high-water bytes) of each process -> the largest of each kind, in bytes."""
    found = dict.fromkeys(KINDS, 0)
    for kind, peak in processes:
        found[kind] = max(found[kind], peak)
    return found


def run_sampled(
    name: str,
    command: Sequence[str],
    *,
    directory: Path,
    environment: Mapping[str, str] | None = None,
    timeout: float = 900.0,
    interval: float = 0.1,
) -> tuple[TreeMemory, Finished]:
    """Run ``command`` in ``directory`` (output in ``<name>.out`` / ``.err``) until its whole
    tree has exited, sampling its memory; the memory and how the run finished. ``SubjectFailed``
    unless it exits 0 in time."""
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
        memory = _sample_until_gone(process, timeout=timeout, interval=interval)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise SubjectFailed(
            f"{name} ran longer than {timeout:.0f}s\n{stderr_tail(stderr)}"
        ) from None
    if process.returncode != 0:
        raise SubjectFailed(f"{name} exited with code {process.returncode}\n{stderr_tail(stderr)}")
    finished = Finished(
        seconds=time.monotonic() - started,
        stdout=stdout,
        stderr=stderr,
        child_cpu_seconds=children_cpu_seconds() - cpu_before,
    )
    return memory, finished


def _sample_until_gone(
    process: subprocess.Popen[bytes], *, timeout: float, interval: float
) -> TreeMemory:
    started = time.monotonic()
    root = psutil.Process(process.pid)
    watched: dict[int, psutil.Process] = {}
    peaks: dict[int, tuple[str, int]] = {}
    samples = []
    while True:
        now = time.monotonic()
        if now - started > timeout:
            raise subprocess.TimeoutExpired(cmd=str(process.args), timeout=timeout)
        if process.poll() is None:
            with contextlib.suppress(psutil.Error):
                for child in [root, *root.children(recursive=True)]:
                    watched.setdefault(child.pid, child)
        rss = dict.fromkeys(KINDS, 0)
        processes = []
        for pid, watched_process in list(watched.items()):
            try:
                name, command = watched_process.name(), watched_process.cmdline()
                if _unexeced_fork(watched_process, command, watched):
                    continue
                kind = kind_of(name, command)
                resident = watched_process.memory_info().rss
                peak = high_water_bytes(Path(f"/proc/{pid}/status").read_text())
            except (psutil.Error, OSError):
                del watched[pid]
                continue
            rss[kind] += resident
            processes.append(ProcessRss(pid, kind, label_of(name, command), resident))
            peaks[pid] = (kind, max(peak, peaks.get(pid, (kind, 0))[1]))
        if processes:
            samples.append(Sample(at=now - started, rss=rss, processes=tuple(processes)))
        if process.poll() is not None and not processes:
            break
        time.sleep(interval)
    return TreeMemory(
        samples=tuple(samples),
        high_water=largest_high_water(peaks.values()),
        seconds=time.monotonic() - started,
    )


def _unexeced_fork(
    process: psutil.Process, command: list[str], watched: Mapping[int, psutil.Process]
) -> bool:
    """Whether ``process`` is a watched process's fork that has not exec'd yet."""
    try:
        parent = watched.get(process.ppid())
        return parent is not None and parent.pid != process.pid and parent.cmdline() == command
    except psutil.Error:
        return False
