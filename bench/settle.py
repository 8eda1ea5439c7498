"""Before a timed run: the last run's writes reach the disk and the CPUs go quiet."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

QUIET_SHARE = 0.9


@dataclass(frozen=True)
class CpuTimes:
    """All CPUs' time since boot, in clock ticks: idle (and waiting for I/O) and in total."""

    idle: int
    total: int


def read_cpu_times(stat: Path = Path("/proc/stat")) -> CpuTimes:
    """The first line of ``/proc/stat``: user nice system idle iowait irq softirq steal ..."""
    fields = [int(value) for value in stat.read_text().split("\n", 1)[0].split()[1:]]
    return CpuTimes(idle=fields[3] + fields[4], total=sum(fields[:8]))


def idle_share(before: CpuTimes, after: CpuTimes) -> float:
    """The share of the CPUs' time between two readings that was idle."""
    total = after.total - before.total
    return (after.idle - before.idle) / total if total > 0 else 1.0


def settle(
    *,
    window_seconds: float = 0.5,
    timeout_seconds: float = 5.0,
    read: Callable[[], CpuTimes] = read_cpu_times,
    sleep: Callable[[float], None] = time.sleep,
    sync: Callable[[], None] = os.sync,
) -> float:
    """Sync, then wait until the CPUs were quiet for a window (or the timeout has passed);
    return the idle share of the last window."""
    sync()
    waited = 0.0
    while True:
        before = read()
        sleep(window_seconds)
        waited += window_seconds
        share = idle_share(before, read())
        if share >= QUIET_SHARE or waited >= timeout_seconds:
            return share
