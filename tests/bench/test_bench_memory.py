"""The memory sampler of figures 1 and 5: which process is what, high-water marks, peaks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench.processes import run_subject
from bench.rss import JVM, OTHER, PYTHON, MemorySampler, TreeMemory, high_water_bytes, kind_of


class TestMemorySampling:
    @pytest.mark.parametrize(
        ("name", "command", "kind"),
        [
            ("java", ["/usr/lib/jvm/java-17/bin/java", "-cp", "x"], JVM),
            ("python3", ["/work/.venv/bin/python3", "-m", "streamjobs.runner"], PYTHON),
            ("python3.11", [], PYTHON),
            ("bash", ["/bin/bash", "spark-submit"], OTHER),
        ],
    )
    def test_processes_are_told_apart_by_kind(
        self, name: str, command: list[str], kind: str
    ) -> None:
        assert kind_of(name, command) == kind

    def test_reads_the_high_water_mark(self) -> None:
        status = "Name:\tjava\nVmPeak:\t 9000 kB\nVmHWM:\t  2048 kB\nVmRSS:\t 1024 kB\n"
        assert high_water_bytes(status) == 2048 * 1024
        assert high_water_bytes("Name:\tzombie\n") == 0

    def test_peaks_are_the_highest_samples_by_kind_and_together(self) -> None:
        mib = 1024 * 1024
        memory = TreeMemory(
            samples=(
                {JVM: 100 * mib, PYTHON: 50 * mib, OTHER: 0},
                {JVM: 300 * mib, PYTHON: 40 * mib, OTHER: 5 * mib},
                {JVM: 200 * mib, PYTHON: 60 * mib, OTHER: 0},
            ),
            high_water={JVM: 310 * mib, PYTHON: 61 * mib, OTHER: 5 * mib},
        )
        assert memory.peak_mib(JVM) == 300
        assert memory.peak_mib(PYTHON) == 60
        assert memory.peak_mib(JVM, PYTHON) == 340
        assert memory.high_water_mib(JVM) == 310


def test_a_fork_that_has_not_exec_d_is_not_counted_twice(tmp_path: Path) -> None:
    forks = "import os, time\nif os.fork() == 0:\n    time.sleep(1.0)\n    os._exit(0)\nos.wait()\n"
    sampler = MemorySampler()
    run_subject(
        "forks", [sys.executable, "-c", forks], directory=tmp_path, watch=sampler, interval=0.05
    )
    alone = MemorySampler()
    run_subject(
        "alone",
        [sys.executable, "-c", "import time; time.sleep(1.0)"],
        directory=tmp_path,
        watch=alone,
        interval=0.05,
    )
    memory, single = sampler.memory(), alone.memory()
    assert memory.samples
    assert memory.peak_mib(PYTHON) < 1.5 * single.peak_mib(PYTHON)
    assert memory.high_water_mib(PYTHON) > 0
