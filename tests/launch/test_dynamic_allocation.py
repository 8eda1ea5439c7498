"""Dynamic allocation on a standalone cluster: ``executors`` is the maximum, ``minExecutors`` and
``initialExecutors`` are passed on with shuffle tracking, the idle timeout is short by default and
the job's to change; on a real cluster executors come under a backlog and go when idle, and the
executor figures follow them, the removed ones kept for what they did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streamjobs.launch.base import DriverHandle, NodeSize
from streamjobs.launch.executor_settings import DYNAMIC_ALLOCATION_DEFAULTS
from streamjobs.launch.spark_ui import ExecutorFigures, ExecutorMetrics, read_executors
from streamjobs.launch.standalone import StandaloneLauncher
from tests.factories import changed, python_manifest
from tests.launch.conftest import (
    TOOLCHAIN,
    Drivers,
    StandaloneCluster,
    attempt_for,
    launch_sandbox,
    python_app_manifest,
    wait_until,
)
from tests.launch.test_command import ATTEMPT_DIR, command_for, conf_of

CLUSTER = "spark://10.0.0.5:7077"
IDLE_TIMEOUT = "spark.dynamicAllocation.executorIdleTimeout"
TASKS = 24
"""The backlog ``load_on_request.py`` makes: one-second tasks, more than one executor finishes
before a second one is there."""


def dynamic_conf(spark_conf: dict[str, str] | None = None, **instance: Any) -> dict[str, str]:
    manifest = changed(
        python_manifest("py"),
        ("spec.instance", {"deployment": "standard", "dynamic": True, **instance}),
        ("spec.configuration.sparkConf", spark_conf or {}),
    )
    attempt = attempt_for(manifest, ATTEMPT_DIR, executor=NodeSize(cores=2, memory_mb=1024))
    return conf_of(command_for(attempt, master=CLUSTER).argv)


def test_the_executor_count_is_the_maximum_and_the_fewest_default_to_none() -> None:
    conf = dynamic_conf(executors=3)
    assert conf["spark.dynamicAllocation.enabled"] == "true"
    assert conf["spark.dynamicAllocation.shuffleTracking.enabled"] == "true"
    assert conf["spark.dynamicAllocation.minExecutors"] == "0"
    assert conf["spark.dynamicAllocation.initialExecutors"] == "0"
    assert conf["spark.dynamicAllocation.maxExecutors"] == "3"
    assert conf["spark.cores.max"] == "6"  # the most there may be, as the quota counts them
    assert "spark.executor.instances" not in conf


def test_min_and_initial_executors_are_passed_on() -> None:
    conf = dynamic_conf(executors=4, minExecutors=1, initialExecutors=3)
    assert conf["spark.dynamicAllocation.minExecutors"] == "1"
    assert conf["spark.dynamicAllocation.initialExecutors"] == "3"
    initial = dynamic_conf(executors=4, minExecutors=2)["spark.dynamicAllocation.initialExecutors"]
    assert initial == "2"  # the minimum, when not given


def test_idle_executors_go_soon_unless_the_job_says_otherwise() -> None:
    assert dynamic_conf(executors=2)[IDLE_TIMEOUT] == DYNAMIC_ALLOCATION_DEFAULTS[IDLE_TIMEOUT]
    assert DYNAMIC_ALLOCATION_DEFAULTS[IDLE_TIMEOUT] == "30s"
    assert dynamic_conf({IDLE_TIMEOUT: "5s"}, executors=2)[IDLE_TIMEOUT] == "5s"


def test_fixed_executors_have_no_dynamic_allocation_settings() -> None:
    attempt = attempt_for(
        changed(python_manifest("py"), ("spec.instance", {"deployment": "standard"})),
        ATTEMPT_DIR,
        executor=NodeSize(cores=1, memory_mb=1024),
    )
    conf = conf_of(command_for(attempt, master=CLUSTER).argv)
    assert not [key for key in conf if key.startswith("spark.dynamicAllocation.")]


def figures_where(
    handle: DriverHandle, condition: Callable[[ExecutorFigures], bool], what: str
) -> ExecutorFigures:
    """The driver's executor figures, read until they meet ``condition``."""

    def meeting() -> ExecutorFigures | None:
        figures = read_executors(handle)
        return figures if figures is not None and condition(figures) else None

    return wait_until(meeting, timeout=180, what=what)


def executors_but_the_driver(figures: ExecutorFigures) -> list[ExecutorMetrics]:
    return [executor for executor in figures.executors if not executor.is_driver]


@pytest.mark.spark
def test_executors_come_under_a_backlog_and_go_when_idle(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        worker_dirs=standalone_cluster.worker_dirs,
        sandbox=launch_sandbox(),
    )
    control = tmp_path / "control"
    control.mkdir()
    manifest = python_app_manifest(
        "dynamic",
        "load_on_request.py",
        str(control),
        str(TASKS),
        instance={
            "deployment": "standard",
            "executor": "tiny",
            "executors": 2,
            "dynamic": True,
            "minExecutors": 0,
            "initialExecutors": 0,
        },
        configuration={"sparkConf": {IDLE_TIMEOUT: "5s"}},
    )
    attempt = attempt_for(manifest, tmp_path / "attempt", executor=NodeSize(cores=1, memory_mb=512))
    handle = drivers.submit(launcher, attempt)

    idle = figures_where(handle, lambda f: True, "the driver's REST API")
    assert idle.running_executors == 0
    assert executors_but_the_driver(idle) == []

    (control / "load").touch()
    busy = figures_where(
        handle, lambda f: f.running_executors == 2, "a second executor under the backlog"
    )
    assert {e.id for e in executors_but_the_driver(busy) if e.is_active} == {"0", "1"}

    gone = figures_where(
        handle,
        lambda f: f.running_executors == 0 and len(executors_but_the_driver(f)) == 2,
        "the idle executors to be given back",
    )
    removed = executors_but_the_driver(gone)
    assert not any(executor.is_active for executor in removed)
    assert sum(executor.completed_tasks for executor in removed) == TASKS
    assert set(launcher.log_files(handle)) >= {"executor-0", "executor-1"}

    (control / "stop").touch()
    assert drivers.wait_exited(launcher, handle) == 0
