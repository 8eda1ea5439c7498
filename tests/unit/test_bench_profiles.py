"""Reading profiles for the benchmark report: py-spy's collapsed stacks and cProfile runs, and the
memory sampler's pure parts (figures 4 and 5)."""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

import pytest
from bench.profiles import (
    cprofile_packages,
    cprofile_rows,
    function_name,
    package_of,
    read_collapsed,
    short_path,
)
from bench.rss import (
    JVM,
    OTHER,
    PYTHON,
    Sample,
    TreeMemory,
    high_water_bytes,
    kind_of,
    label_of,
    run_sampled,
)
from bench.rss import largest_high_water as largest

SITE = "/work/.venv/lib/python3.11/site-packages"
RAW = f"""\
<module> (/work/src/streamjobs/cli/__main__.py:3);run (/usr/lib/python3.11/threading.py:975);\
list_jobs (/work/src/streamjobs/api/jobs.py:40);execute ({SITE}/sqlalchemy/orm/session.py:2300) 60
<module> (/work/src/streamjobs/cli/__main__.py:3);list_jobs (/work/src/streamjobs/api/jobs.py:40);\
job_document (/work/src/streamjobs/services/jobs.py:225);\
deepcopy (/usr/lib/python3.11/copy.py:128) 30
<module> (/work/src/streamjobs/cli/__main__.py:3);select ({SITE}/anyio/_core.py:10) 10
not a stack line
"""


class TestPaths:
    @pytest.mark.parametrize(
        ("path", "short", "package"),
        [
            (f"{SITE}/sqlalchemy/orm/session.py", "sqlalchemy/orm/session.py", "sqlalchemy"),
            ("/work/src/streamjobs/api/jobs.py", "streamjobs/api/jobs.py", "streamjobs"),
            ("/usr/lib/python3.11/json/encoder.py", "json/encoder.py", "json"),
            ("/usr/lib/python3.11/copy.py", "copy.py", "copy"),
            ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>", "<frozen importlib"),
        ],
    )
    def test_a_file_is_known_by_its_package(self, path: str, short: str, package: str) -> None:
        assert short_path(path) == short
        assert package_of(path).startswith(package)

    def test_a_frame_is_named_without_its_line(self) -> None:
        frame = f"Session.execute ({SITE}/sqlalchemy/orm/session.py:2300)"
        assert function_name(frame) == "Session.execute (sqlalchemy/orm/session.py)"


class TestCollapsedStacks:
    def test_counts_every_sample(self) -> None:
        assert read_collapsed(RAW).samples == 100

    def test_own_time_goes_to_the_innermost_frame(self) -> None:
        own = {item.name: item.amount for item in read_collapsed(RAW).own}
        assert own == {
            "execute (sqlalchemy/orm/session.py)": 60,
            "deepcopy (copy.py)": 30,
            "select (anyio/_core.py)": 10,
        }

    def test_streamjobs_functions_count_with_their_callees_less_the_command(self) -> None:
        inclusive = {item.name: item.share for item in read_collapsed(RAW).inclusive}
        assert inclusive == {
            "list_jobs (streamjobs/api/jobs.py)": pytest.approx(0.9),
            "job_document (streamjobs/services/jobs.py)": pytest.approx(0.3),
        }

    def test_packages_by_the_innermost_frame(self) -> None:
        packages = [(item.name, item.share) for item in read_collapsed(RAW).packages]
        assert packages == [("sqlalchemy", 0.6), ("copy", 0.3), ("anyio", 0.1)]

    def test_keeps_the_top_entries(self) -> None:
        assert len(read_collapsed(RAW, top=1).own) == 1

    def test_an_empty_profile(self) -> None:
        profile = read_collapsed("")
        assert profile.samples == 0
        assert profile.own == ()


def _work() -> int:
    return sum(sorted(range(2000), key=lambda value: -value))


class TestCProfile:
    def test_rows_by_cumulative_time_start_with_the_profiled_call(self) -> None:
        profiler = cProfile.Profile()
        profiler.runcall(_work)
        rows = cprofile_rows(pstats.Stats(profiler), top=3)
        assert rows[0].function.startswith("_work (")
        assert rows[0].calls == 1
        assert rows[0].cumulative_seconds >= rows[1].cumulative_seconds
        by_own = cprofile_rows(pstats.Stats(profiler), by="own")
        assert by_own[0].own_seconds >= by_own[-1].own_seconds

    def test_own_time_by_package_adds_up_to_the_whole(self) -> None:
        profiler = cProfile.Profile()
        profiler.runcall(_work)
        shares = cprofile_packages(pstats.Stats(profiler))
        assert sum(item.share for item in shares) == pytest.approx(1.0)
        assert "built-in" in {item.name for item in shares}


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

    def test_keeps_the_largest_process_of_each_kind(self) -> None:
        found = largest([(JVM, 50), (JVM, 700), (PYTHON, 90)])
        assert found == {JVM: 700, PYTHON: 90, OTHER: 0}

    def test_peaks_are_the_highest_samples_by_kind_and_together(self) -> None:
        mib = 1024 * 1024
        memory = TreeMemory(
            samples=(
                Sample(0.0, {JVM: 100 * mib, PYTHON: 50 * mib, OTHER: 0}),
                Sample(0.1, {JVM: 300 * mib, PYTHON: 40 * mib, OTHER: 5 * mib}),
                Sample(0.2, {JVM: 200 * mib, PYTHON: 60 * mib, OTHER: 0}),
            ),
            high_water={JVM: 310 * mib, PYTHON: 61 * mib, OTHER: 5 * mib},
            seconds=0.3,
        )
        assert memory.peak_mib(JVM) == 300
        assert memory.peak_mib(PYTHON) == 60
        assert memory.peak_total_mib == 345
        assert memory.high_water_mib(JVM) == 310
        assert memory.peak_sample(JVM) == memory.samples[1]

    @pytest.mark.parametrize(
        ("name", "command", "label"),
        [
            (
                "java",
                [
                    "/usr/bin/java",
                    "-cp",
                    "/a.jar:/b",
                    "-Xmx1g",
                    "org.apache.spark.deploy.SparkSubmit",
                ],
                "org.apache.spark.deploy.SparkSubmit",
            ),
            ("java", ["java", "-Dlog4j.configuration=x.properties", "-jar", "/opt/k.jar"], "k.jar"),
            ("java", ["java", "-version"], "java"),
            ("python3.11", ["/venv/bin/python", "-m", "streamjobs.runner"], "python"),
        ],
    )
    def test_labels_a_jvm_by_its_main_class_and_others_by_their_program(
        self, name: str, command: list[str], label: str
    ) -> None:
        assert label_of(name, command) == label


def test_a_fork_that_has_not_exec_d_is_not_counted_twice(tmp_path: Path) -> None:
    forks = "import os, time\nif os.fork() == 0:\n    time.sleep(1.0)\n    os._exit(0)\nos.wait()\n"
    memory, _ = run_sampled(
        "forks", [sys.executable, "-c", forks], directory=tmp_path, interval=0.05
    )
    counted = [len([p for p in s.processes if p.kind == PYTHON]) for s in memory.samples]
    assert counted
    assert max(counted) == 1
