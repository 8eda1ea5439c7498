"""LocalLauncher with real spark-submit: drivers run, stop, abort, die, and are found again."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from streamjobs.launch.base import DriverHandle, DriverState, LaunchFailed, NodeSize
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.logs import tail_lines
from streamjobs.launch.spark_ui import ExecutorFigures, read_executors
from tests.conftest import CLASS_DATA_ARCHIVE, TEST_JAVA_OPTIONS, skip_or_fail
from tests.factories import changed, pipeline_manifest
from tests.launch.conftest import (
    TOOLCHAIN,
    Drivers,
    attempt_for,
    launch_sandbox,
    python_app_manifest,
    wait_until,
)
from tests.spark.pipelines import pipeline_job

PIPELINE_DRIVER = NodeSize(cores=2, memory_mb=1024)


def ticks_to_parquet(tmp_path: Path, name: str = "ticks") -> dict[str, Any]:
    """A rate -> parquet pipeline writing a micro-batch every second, until stopped."""
    return pipeline_job(
        name,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        checkpointLocation=(tmp_path / "checkpoint").as_uri(),
        inputs=[{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 20}}],
        steps=[[("evens", "SELECT value FROM ticks WHERE value % 2 = 0")]],
        outputs=[{"name": "evens", "format": "parquet", "path": str(tmp_path / "out")}],
        guarantee="AT_LEAST_ONCE",
    )


def parquet_files(directory: Path) -> list[Path]:
    return list(directory.glob("*.parquet")) if directory.is_dir() else []


def start_pipeline(drivers: Drivers, launcher: LocalLauncher, tmp_path: Path) -> DriverHandle:
    """Start the ticks pipeline and return once it has written parquet files."""
    attempt = attempt_for(ticks_to_parquet(tmp_path), tmp_path / "attempt", driver=PIPELINE_DRIVER)
    handle = drivers.submit(launcher, attempt)

    def wrote_files() -> bool:
        if launcher.poll(handle).state is DriverState.EXITED:
            log = "\n".join(tail_lines(Path(handle.directory) / "stderr.log", 40))
            pytest.fail(f"the pipeline exited before writing; its log ends:\n{log}")
        return bool(parquet_files(tmp_path / "out"))

    wait_until(wrote_files, timeout=180, what="the pipeline to write parquet files")
    return handle


def test_no_standard_jobs_on_one_machine(tmp_path: Path) -> None:
    manifest = changed(pipeline_manifest(), ("spec.instance", {"deployment": "standard"}))
    with pytest.raises(LaunchFailed, match="standard"):
        LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox()).submit(
            attempt_for(manifest, tmp_path / "attempt")
        )
    assert not (tmp_path / "attempt").exists()


def test_a_missing_main_application_file_fails_before_anything_starts(tmp_path: Path) -> None:
    manifest = python_app_manifest("missing", "no_such_app.py")
    with pytest.raises(LaunchFailed, match=r"no_such_app\.py"):
        LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox()).submit(
            attempt_for(manifest, tmp_path / "attempt")
        )
    assert not (tmp_path / "attempt").exists()


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_sandboxed_driver_starts_with_the_operators_java_options_and_class_data(
    drivers: Drivers, tmp_path: Path
) -> None:
    """The server's ``driver_java_options`` reach the driver's JVM before the job's own, and the
    class-data archive among them is mapped inside the sandbox (its classes load from it)."""
    operator = f"{TEST_JAVA_OPTIONS} -Dprobe.operator=yes -Xlog:class+load:file=classes.log"
    launcher = LocalLauncher(
        toolchain=replace(TOOLCHAIN, driver_java_options=operator), sandbox=launch_sandbox()
    )
    manifest = python_app_manifest(
        "jvm-options", "jvm_options_probe.py", configuration={"javaOptions": "-Dprobe.job=yes"}
    )
    handle = drivers.submit(launcher, attempt_for(manifest, tmp_path / "a"))

    assert drivers.wait_exited(launcher, handle) == 0
    [line] = [
        line
        for line in tail_lines(launcher.log_files(handle)["driver-stdout"], 20)
        if line.startswith("jvm_options ")
    ]
    options = json.loads(line.removeprefix("jvm_options "))
    assert options.index("-Dprobe.operator=yes") < options.index("-Dprobe.job=yes")
    if not CLASS_DATA_ARCHIVE.is_file():
        skip_or_fail(f"no class-data archive at {CLASS_DATA_ARCHIVE} (make test writes it)")
    assert f"-XX:SharedArchiveFile={CLASS_DATA_ARCHIVE}" in options
    loaded = (tmp_path / "a" / "work" / "classes.log").read_text()
    assert "source: shared objects file (top)" in loaded


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_python_app_runs_to_its_exit_code_and_leaves_its_logs(
    drivers: Drivers, tmp_path: Path
) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    attempt = attempt_for(
        python_app_manifest("exits-3", "exit_with.py", "3"),
        tmp_path / "a",
        report_url="http://127.0.0.1:9/reports",
        report_token="token-of-app-0001",
    )
    handle = drivers.submit(launcher, attempt)
    token_file = tmp_path / "a" / "report-token"
    assert token_file.read_text() == "token-of-app-0001"
    assert token_file.stat().st_mode & 0o777 == 0o600

    assert handle.master == "local[1]"
    assert drivers.wait_exited(launcher, handle) == 3
    logs = launcher.log_files(handle)
    assert set(logs) == {"driver", "driver-stdout"}
    assert "exit_with exiting 3" in tail_lines(logs["driver-stdout"], 5)
    assert logs["driver"].stat().st_size > 0
    launcher.stop(handle)
    launcher.abort(handle)
    launcher.kill(handle)
    assert launcher.poll(handle).exit_code == 3


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_new_launcher_finds_a_driver_another_one_started(
    drivers: Drivers, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    manifest = python_app_manifest("waits", "exit_with.py", "7", str(release))
    handle = drivers.submit(
        LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox()),
        attempt_for(manifest, tmp_path / "a"),
    )
    wait_until(
        lambda: "exit_with starting" in (Path(handle.directory) / "stdout.log").read_text(),
        what="the app to start",
    )

    after_restart = LocalLauncher()
    assert after_restart.poll(handle).state is DriverState.RUNNING
    assert poll_from_another_process(handle) == {"state": "RUNNING", "exit_code": None}
    release.touch()
    # Until this process reaps it, the ended wrapper stays a zombie: still ended to others.
    seen = wait_until(
        lambda: (health := poll_from_another_process(handle))["state"] == "EXITED" and health,
        what="another process to see the driver exit",
    )
    assert seen == {"state": "EXITED", "exit_code": 7}
    assert drivers.wait_exited(after_restart, handle) == 7


def poll_from_another_process(handle: DriverHandle) -> dict[str, Any]:
    """What a LocalLauncher in a process that is not the driver's parent sees."""
    script = (
        "import json, sys\n"
        "from dataclasses import asdict\n"
        "from streamjobs.launch.base import DriverHandle\n"
        "from streamjobs.launch.local import LocalLauncher\n"
        "handle = DriverHandle(**json.loads(sys.argv[1]))\n"
        "print(json.dumps(asdict(LocalLauncher().poll(handle))))\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", script, json.dumps(asdict(handle))],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(finished.stdout)
    return result


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_stopped_pipeline_commits_and_exits_0(drivers: Drivers, tmp_path: Path) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    handle = start_pipeline(drivers, launcher, tmp_path)

    figures = wait_until(lambda: read_executors(handle), what="the driver's REST API")
    assert isinstance(figures, ExecutorFigures)
    assert figures.spark_application_id.startswith("local-")
    driver = next(e for e in figures.executors if e.id == "driver")
    assert driver.is_active
    assert driver.total_cores == 2
    assert driver.host == "127.0.0.1"
    assert figures.running_executors == 0
    listening = [
        connection.laddr.ip.removeprefix("::ffff:")
        for connection in psutil.net_connections("tcp")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == handle.ui_port
    ]
    assert listening == ["127.0.0.1"]
    assert json.loads(json.dumps(figures.to_dict()))["executors"][0]["id"] == "driver"
    wait_until(
        lambda: (f := read_executors(handle)) is not None and f.executors[0].completed_tasks > 0,
        what="the driver to complete tasks",
    )

    launcher.stop(handle)
    assert drivers.wait_exited(launcher, handle) == 0
    assert list((tmp_path / "checkpoint").rglob("commits/0"))
    assert read_executors(handle) is None


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_an_aborted_pipeline_exits_with_a_failure_code(drivers: Drivers, tmp_path: Path) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    handle = start_pipeline(drivers, launcher, tmp_path)

    launcher.abort(handle)
    exit_code = drivers.wait_exited(launcher, handle)
    assert exit_code is not None
    assert exit_code != 0


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_killed_driver_is_gone_without_an_exit_code(drivers: Drivers, tmp_path: Path) -> None:
    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=launch_sandbox())
    release = tmp_path / "release"
    manifest = python_app_manifest("killed", "exit_with.py", "0", str(release))
    handle = drivers.submit(launcher, attempt_for(manifest, tmp_path / "a"))
    wait_until(
        lambda: "exit_with starting" in (Path(handle.directory) / "stdout.log").read_text(),
        what="the app to start",
    )

    launcher.kill(handle)
    assert drivers.wait_exited(launcher, handle, timeout=30) is None
    launcher.kill(handle)
