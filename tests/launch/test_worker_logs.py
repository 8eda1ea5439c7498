"""Logs read from a real standalone worker's web UI read like the files they are on the worker:
by byte range, tail, whole; a log the worker does not have, or a worker that is gone, is a clear
error (404, 502), never a server error."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.api.errors import status_of
from streamjobs.domain.errors import NotFound
from streamjobs.launch import logs, worker_logs
from streamjobs.launch.base import DriverHandle, NodeSize
from streamjobs.launch.ports import free_loopback_port
from streamjobs.launch.standalone import StandaloneLauncher
from streamjobs.launch.worker_logs import (
    ClusterWorkers,
    LocalLog,
    LogUnavailable,
    WorkerLog,
    listed_worker,
)
from tests.launch.conftest import (
    TOOLCHAIN,
    Drivers,
    StandaloneCluster,
    attempt_for,
    python_app_manifest,
)

pytestmark = pytest.mark.spark

DRIVER = NodeSize(cores=1, memory_mb=512)
LINES = 3000
"""Lines the driver prints: its stdout spans several of the pieces a worker is asked for."""


@pytest.fixture(scope="module")
def ended_driver(
    standalone_cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DriverHandle, Path]]:
    """A cluster-mode driver that printed ``LINES`` lines and ended, and its directory on its
    worker (the test cluster's workers are on this machine, so their files can be compared)."""
    launcher = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        rest_url=standalone_cluster.rest_url,
        master_web_url=standalone_cluster.web_url,
    )
    manifest = python_app_manifest(
        "prints",
        "print_lines.py",
        str(LINES),
        instance={"deployment": "standard", "deployMode": "cluster", "executor": "tiny"},
    )
    directory = tmp_path_factory.mktemp("worker-logs") / "attempt"
    attempt = attempt_for(manifest, directory, driver=DRIVER, executor=DRIVER)
    drivers = Drivers()
    handle = drivers.submit(launcher, attempt)
    try:
        assert drivers.wait_exited(launcher, handle) == 0
        assert handle.submission_id is not None
        found = [d / handle.submission_id for d in standalone_cluster.worker_dirs]
        yield handle, next(path for path in found if path.is_dir())
    finally:
        drivers.kill_all()


@pytest.fixture(scope="module")
def worker_url(
    standalone_cluster: StandaloneCluster, ended_driver: tuple[DriverHandle, Path]
) -> str:
    """The web UI of the worker the driver ran on, as the master lists it (both workers are on
    127.0.0.1: the one that serves the driver's directory)."""
    workers = ClusterWorkers(standalone_cluster.web_url).listed()
    assert workers is not None
    driver_id = ended_driver[1].name
    for worker in workers.values():
        with contextlib.suppress(NotFound):
            WorkerLog(worker.web_url, "stdout", driver_id=driver_id).size()
            assert listed_worker(f"{worker.web_url}/logPage/?x=1", workers) == worker
            return worker.web_url
    pytest.fail(f"no worker of {sorted(workers)} serves the logs of {driver_id}")


def test_a_worker_log_reads_like_its_file(
    ended_driver: tuple[DriverHandle, Path], worker_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver_dir = ended_driver[1]
    file = driver_dir / "stdout"
    content = file.read_bytes()
    remote = WorkerLog(worker_url, "stdout", driver_id=driver_dir.name)

    line_10, line_20 = content.index(b"line 10 "), content.index(b"line 20 ")
    assert remote.size() == len(content) > 2 * 64 * 1024
    assert remote.read_range(line_10, line_20) == content[line_10:line_20]
    assert remote.read_range(len(content) - 10) == content[-10:]
    assert remote.read_range(len(content) + 100) == b""
    assert remote.tail_lines(3) == logs.tail_lines(file, 3)
    assert remote.tail_lines(2500) == logs.tail_lines(file, 2500)
    assert remote.tail_text(1000) == LocalLog(file).tail_text(1000)
    monkeypatch.setattr(worker_logs, "PIECE_LIMIT", 7000)  # many pieces, cut mid-line
    assert remote.read_range(0) == content
    assert remote.read_range(3, 20_003) == content[3:20_003]
    assert b"".join(remote.chunks()) == content


def test_the_launcher_names_a_cluster_driver_s_logs_on_its_worker(
    standalone_cluster: StandaloneCluster, ended_driver: tuple[DriverHandle, Path], worker_url: str
) -> None:
    handle, driver_dir = ended_driver
    launcher = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        rest_url=standalone_cluster.rest_url,
        master_web_url=standalone_cluster.web_url,
    )
    sources = launcher.log_sources(handle)

    assert sources["driver"] == WorkerLog(worker_url, "stderr", driver_id=handle.submission_id)
    assert sources["driver-stdout"].size() == (driver_dir / "stdout").stat().st_size
    with_files = StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        worker_dirs=standalone_cluster.worker_dirs,
    )
    assert with_files.log_files(handle)["driver-stdout"] == driver_dir / "stdout"


def test_a_log_the_worker_does_not_have_is_not_found(worker_url: str) -> None:
    missing = WorkerLog(worker_url, "stderr", driver_id="driver-20200101000000-9999")
    with pytest.raises(NotFound, match="driver-20200101000000-9999") as raised:
        missing.size()
    assert status_of(raised.value) == 404
    executor = WorkerLog(
        worker_url, "stderr", application_id="app-20200101000000-0001", executor_id="0"
    )
    with pytest.raises(NotFound):
        executor.read_range(0, 10)
    assert executor.tail_text() == ""


def test_a_worker_that_is_gone_is_a_clear_error_not_a_server_error() -> None:
    gone = WorkerLog(f"http://127.0.0.1:{free_loopback_port()}", "stderr", driver_id="driver-1-1")
    with pytest.raises(LogUnavailable, match="did not answer") as raised:
        gone.tail_lines(10)
    assert status_of(raised.value) == 502
    assert gone.tail_text() == ""
    with pytest.raises(LogUnavailable):
        list(gone.chunks())
    lost = WorkerLog("http://192.0.2.1:8081", "stdout", driver_id="driver-1-1", worker_alive=False)
    with pytest.raises(LogUnavailable, match="lost"):
        lost.size()
