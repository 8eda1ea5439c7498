"""StandaloneLauncher on a real Spark standalone cluster: a standard job's executors, their logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.launch.base import NodeSize
from streamjobs.launch.logs import tail_lines
from streamjobs.launch.standalone import APPLICATION_ID_FILE, StandaloneLauncher
from tests.launch.conftest import (
    TOOLCHAIN,
    Drivers,
    StandaloneCluster,
    attempt_for,
    launch_sandbox,
    python_app_manifest,
)

pytestmark = pytest.mark.spark


def test_a_standard_job_runs_on_two_executors_whose_logs_are_listed(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        worker_dirs=standalone_cluster.worker_dirs,
        sandbox=launch_sandbox(),
    )
    manifest = python_app_manifest(
        "rdd-sum",
        "rdd_sum.py",
        instance={"deployment": "standard", "executor": "tiny", "executors": 2},
        configuration={
            # Start the tasks only once both executors are there, so both do some.
            "sparkConf": {
                "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
            }
        },
    )
    attempt = attempt_for(manifest, tmp_path / "attempt", executor=NodeSize(cores=1, memory_mb=512))
    handle = drivers.submit(launcher, attempt)

    assert handle.master == standalone_cluster.master_url
    assert drivers.wait_exited(launcher, handle) == 0
    logs = launcher.log_files(handle)
    assert "rdd_sum total=999000" in tail_lines(logs["driver-stdout"], 5)
    executor_logs = sorted(name for name in logs if name.startswith("executor-"))
    assert executor_logs == ["executor-0", "executor-0-stdout", "executor-1", "executor-1-stdout"]
    for name in ("executor-0", "executor-1"):
        assert any("Executor" in line for line in tail_lines(logs[name], 10_000)), name
    application_id = (Path(handle.directory) / APPLICATION_ID_FILE).read_text().strip()
    assert application_id.startswith("app-")
    assert logs["executor-0"].parent.parent.name == application_id


def test_a_single_node_job_still_runs_locally(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        worker_dirs=standalone_cluster.worker_dirs,
        sandbox=launch_sandbox(),
    )
    attempt = attempt_for(python_app_manifest("local", "exit_with.py", "0"), tmp_path / "a")
    handle = drivers.submit(launcher, attempt)

    assert handle.master == "local[1]"
    assert drivers.wait_exited(launcher, handle) == 0
    assert set(launcher.log_files(handle)) == {"driver", "driver-stdout"}
