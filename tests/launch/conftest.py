"""Fixtures for the launcher tests: attempts to start, drivers that never outlive their test, and
a real Spark standalone cluster (a master and two workers) for standard deployments."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from streamjobs.domain.connections import Connection
from streamjobs.domain.spec import parse_manifest
from streamjobs.launch.base import (
    AttemptSpec,
    DriverHandle,
    DriverHealth,
    DriverState,
    Launcher,
    NodeSize,
)
from streamjobs.launch.command import Toolchain
from streamjobs.launch.ports import free_loopback_port, free_loopback_ports
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from tests.conftest import CLUSTER_JAVA_OPTIONS, TEST_JAVA_OPTIONS, skip_or_fail

APPS = Path(__file__).parent / "apps"
TOOLCHAIN = Toolchain.installed(driver_java_options=TEST_JAVA_OPTIONS)
T = TypeVar("T")


def wait_until(
    condition: Callable[[], T | None], *, timeout: float = 120, what: str = "the condition"
) -> T:
    """Poll ``condition`` until it gives a truthy value, and return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def attempt_for(
    manifest: dict[str, Any],
    directory: Path,
    *,
    driver: NodeSize = NodeSize(cores=1, memory_mb=512),
    executor: NodeSize | None = None,
    connections: tuple[Connection, ...] = (),
    **fields: Any,
) -> AttemptSpec:
    """An attempt of the job ``manifest`` whose files go to ``directory``; its data root is the
    directory around it (the test's own)."""
    fields.setdefault("data_roots", (directory.parent.as_uri(),))
    return AttemptSpec(
        application_id=fields.pop("application_id", "app-0001"),
        attempt=fields.pop("attempt", 1),
        job=parse_manifest(manifest),
        directory=directory,
        driver=driver,
        executor=executor,
        connections=connections,
        **fields,
    )


@functools.cache
def launch_sandbox() -> BubblewrapSandbox:
    """The sandbox every driver of these tests starts in, as in a server (isolation is on in
    every test run). Identity homes (the resolver's cache) are shared by the whole run."""
    run = Path(tempfile.mkdtemp(prefix="streamjobs-launch-"))
    return BubblewrapSandbox(
        hidden=[run / "server-home"], identity_homes=run / "identities", toolchain=TOOLCHAIN
    )


def python_app_manifest(name: str, app: str, *arguments: str, **spec: Any) -> dict[str, Any]:
    """A python job running ``tests/launch/apps/<app>`` with ``arguments``."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "application": {
                "type": "python",
                "mainApplicationFile": (APPS / app).as_uri(),
                "arguments": list(arguments),
            },
            **spec,
        },
    }


@dataclass
class Drivers:
    """Submits through launchers and, at the end of the test, kills whatever still runs."""

    started: list[tuple[Launcher, DriverHandle]] = field(default_factory=list)

    def submit(self, launcher: Launcher, attempt: AttemptSpec) -> DriverHandle:
        handle = launcher.submit(attempt)
        self.started.append((launcher, handle))
        return handle

    def wait_exited(
        self, launcher: Launcher, handle: DriverHandle, timeout: float = 180
    ) -> int | None:
        """The exit code once the driver has exited."""
        health = wait_until(
            lambda: _exited(launcher.poll(handle)),
            timeout=timeout,
            what=f"the driver in {handle.directory} to exit",
        )
        return health.exit_code

    def kill_all(self) -> None:
        for launcher, handle in self.started:
            launcher.kill(handle)
            deadline = time.monotonic() + 30
            while launcher.poll(handle).state is DriverState.RUNNING:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.1)


def _exited(health: DriverHealth) -> DriverHealth | None:
    return health if health.state is DriverState.EXITED else None


@pytest.fixture
def drivers() -> Iterator[Drivers]:
    started = Drivers()
    yield started
    started.kill_all()


@pytest.fixture(scope="session")
def java() -> str:
    found = shutil.which("java")
    if found is None:
        skip_or_fail("java is not installed, so Spark cannot run")
    return found


@dataclass(frozen=True)
class StandaloneCluster:
    master_url: str
    web_url: str
    worker_dirs: tuple[Path, ...]
    rest_url: str
    """The master's REST submission server, which cluster deploy mode submits through."""


@pytest.fixture(scope="session")
def standalone_cluster(
    java: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StandaloneCluster]:
    """A Spark standalone master (with its REST submission server) and two workers (1 core,
    1 GB each) on 127.0.0.1."""
    root = tmp_path_factory.mktemp("standalone")
    spark_home = Toolchain.installed().spark_home
    spark_class = str(spark_home / "bin" / "spark-class")
    environment = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_HOME": str(spark_home),
        "JDK_JAVA_OPTIONS": CLUSTER_JAVA_OPTIONS,  # executors and cluster drivers inherit it
    }
    master_port, master_web_port, rest_port = free_loopback_ports(3)
    master_url = f"spark://127.0.0.1:{master_port}"
    rest_options = f"-Dspark.master.rest.enabled=true -Dspark.master.rest.port={rest_port}"
    processes: list[subprocess.Popen[bytes]] = []

    def start(name: str, *arguments: str, options: str = "") -> None:
        with open(root / f"{name}.log", "wb") as log:
            processes.append(
                subprocess.Popen(
                    [spark_class, *arguments],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**environment, "SPARK_MASTER_OPTS": options},
                    start_new_session=True,
                )
            )

    worker_dirs = (root / "worker-1", root / "worker-2")
    try:
        start(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(master_port)),
            *("--webui-port", str(master_web_port)),
            options=rest_options,
        )
        for number, work_dir in enumerate(worker_dirs, start=1):
            work_dir.mkdir()
            start(
                f"worker-{number}",
                "org.apache.spark.deploy.worker.Worker",
                master_url,
                *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
                *("--work-dir", str(work_dir), "--webui-port", str(free_loopback_port())),
            )
        web_url = f"http://127.0.0.1:{master_web_port}"
        wait_until(
            lambda: _alive_workers(web_url, processes, root) == len(worker_dirs),
            timeout=120,
            what="the standalone master to see both workers",
        )
        yield StandaloneCluster(
            master_url=master_url,
            web_url=web_url,
            worker_dirs=worker_dirs,
            rest_url=f"http://127.0.0.1:{rest_port}",
        )
    finally:
        _stop_groups(processes)


def _alive_workers(web_url: str, processes: list[subprocess.Popen[bytes]], logs: Path) -> int:
    for process in processes:
        if process.poll() is not None:
            pytest.fail(f"a standalone cluster process exited early; see the logs in {logs}")
    try:
        state = httpx.get(f"{web_url}/json/", timeout=2).json()
    except (httpx.HTTPError, ValueError):
        return 0
    return int(state.get("aliveworkers", 0))


def _stop_groups(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each process group, then SIGKILL to those still there after ten seconds."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
