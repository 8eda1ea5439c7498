"""What machine a benchmark ran on: cores, memory, CPU and its speed, Java, Spark, Python, load,
commit."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyspark

SPEED_CHECK_ADDITIONS = 1_000_000


@dataclass(frozen=True)
class Machine:
    """The facts REPORT.md states about where and when it was measured."""

    date: str
    cores: int
    memory_gib: float
    cpu: str
    os: str
    java: str
    spark: str
    python: str
    load_average: str
    commit: str
    speed_check_ms: float

    def markdown(self) -> str:
        rows = [
            ("date (UTC)", self.date),
            ("cores", str(self.cores)),
            ("memory", f"{self.memory_gib:.1f} GiB"),
            ("CPU", self.cpu),
            ("OS", self.os),
            ("Java", self.java),
            ("Spark (pyspark)", self.spark),
            ("Python", self.python),
            ("load average at start (1, 5, 15 min)", self.load_average),
            (
                f"CPU speed check: {SPEED_CHECK_ADDITIONS:,} additions in a Python loop, best of 5",
                f"{self.speed_check_ms:.0f} ms",
            ),
            ("streamjobs commit", self.commit),
        ]
        lines = ["| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]
        return "\n".join(lines)


def describe_machine(repository: Path) -> Machine:
    return Machine(
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        cores=os.cpu_count() or 0,
        memory_gib=_memory_gib(),
        cpu=_cpu_model(),
        os=f"{platform.system()} {platform.release()}",
        java=_java_version(),
        spark=pyspark.__version__,
        python=platform.python_version(),
        load_average=" ".join(_read("/proc/loadavg").split()[:3]) or "unknown",
        commit=_commit(repository),
        speed_check_ms=speed_check_ms(),
    )


def speed_check_ms(repetitions: int = 5) -> float:
    """The best of ``repetitions`` timings of the same loop of additions, in milliseconds."""
    best = float("inf")
    for _ in range(repetitions):
        started = time.perf_counter()
        total = 0
        for number in range(SPEED_CHECK_ADDITIONS):
            total += number
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _memory_gib() -> float:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024 / 1024
    return 0.0


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _java_version() -> str:
    try:
        shown = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    lines = shown.stderr.strip().splitlines()
    return lines[0] if lines else "unknown"


def _commit(repository: Path) -> str:
    def git(*arguments: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repository), *arguments], capture_output=True, text=True
        )
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{commit} (with uncommitted changes)" if git("status", "--porcelain") else commit


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""
