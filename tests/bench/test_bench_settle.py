"""The harness's pause before a timed run: synced first, then quiet CPUs or the timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.settle import CpuTimes, idle_share, read_cpu_times, settle


class FakeCpus:
    """CPU readings that go idle the given shares of successive windows of 100 ticks."""

    def __init__(self, shares: list[float]) -> None:
        self.times = CpuTimes(idle=0, total=0)
        self.shares = list(shares)
        self.slept: list[float] = []
        self.synced = 0

    def read(self) -> CpuTimes:
        return self.times

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        share = self.shares.pop(0)
        self.times = CpuTimes(
            idle=self.times.idle + round(share * 100), total=self.times.total + 100
        )

    def sync(self) -> None:
        self.synced += 1


def settled(cpus: FakeCpus, timeout_seconds: float = 5.0) -> float:
    return settle(
        window_seconds=0.5,
        timeout_seconds=timeout_seconds,
        read=cpus.read,
        sleep=cpus.sleep,
        sync=cpus.sync,
    )


def test_waits_for_a_quiet_window_after_syncing() -> None:
    cpus = FakeCpus([0.4, 0.7, 0.95, 0.2])
    assert settled(cpus) == pytest.approx(0.95)
    assert cpus.synced == 1
    assert cpus.slept == [0.5, 0.5, 0.5]


def test_gives_up_at_the_timeout_with_the_last_share() -> None:
    cpus = FakeCpus([0.5] * 10)
    assert settled(cpus, timeout_seconds=2.0) == pytest.approx(0.5)
    assert len(cpus.slept) == 4


def test_idle_share_counts_iowait_as_idle_and_an_empty_interval_as_idle(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    reading = read_cpu_times(stat)
    assert reading == CpuTimes(idle=850, total=1000)
    assert idle_share(reading, reading) == 1.0
    assert idle_share(CpuTimes(idle=0, total=0), reading) == pytest.approx(0.85)
