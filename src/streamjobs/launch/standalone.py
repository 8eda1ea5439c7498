"""``StandaloneLauncher``: standard jobs on a Spark standalone cluster (``spark://host:port``).

A standard job's driver runs in one of two deploy modes (``spec.instance.deployMode``):

- client (the default): on this machine, watched and ended like a local driver
  (``driver_process``), its executors on the cluster's workers;
- cluster: on one of the workers, submitted, followed and ended through the master's REST
  submission server by its submission id (``cluster.ClusterDrivers``).

A handle with a ``submission_id`` is a cluster-mode driver's; every call about it goes to
``ClusterDrivers``, every other one is a local process's. A pipeline's runner is stopped, and
asked for snapshots, by files in its attempt directory in either mode (``stop``,
``request_snapshot``): a cluster-mode driver's is shared with its worker. singleNode jobs still
run alone as ``local[N]``.

Executors write their logs under each worker's work directory, in
``<work dir>/<Spark application id>/<executor id>/{stderr,stdout}`` (a cluster-mode driver in
``<work dir>/<driver id>/``). With ``worker_dirs`` (workers on this machine) they are read as
files; otherwise from the workers' web UIs over HTTP (``worker_logs``), the executors as the
driver's REST API lists them (``allexecutors``: also those that came and went), or, once the
driver is gone, as the live workers say they ran them. The Spark application id (``app-…``) is
assigned by the master when the driver registers, after ``submit`` has returned its handle, so
it is found later, first found way first:

1. ``spark-application-id`` in the attempt directory, where an earlier lookup saved it;
2. the driver's REST API, while it runs;
3. the driver's log, where Spark writes "Connected to Spark cluster with app ID app-…" as it
   registers, even when the driver ended before anyone asked.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from streamjobs.launch.attempt_directory import STDERR_FILE
from streamjobs.launch.base import AttemptSpec, DriverHandle, DriverHealth
from streamjobs.launch.cluster import ClusterDrivers, is_cluster_launch
from streamjobs.launch.command import Toolchain, master_for
from streamjobs.launch.driver_addresses import LOOPBACK_DRIVER, DriverAddresses
from streamjobs.launch.driver_process import SparkSubmitLauncher
from streamjobs.launch.rest_submission import default_rest_url, default_web_url
from streamjobs.launch.sandbox_host import Sandbox
from streamjobs.launch.spark_ui import executor_log_urls, spark_application_id
from streamjobs.launch.worker_logs import (
    LocalLog,
    LogSource,
    Worker,
    executor_logs_at,
    listed_worker,
    query_of,
)

APPLICATION_ID_FILE = "spark-application-id"
_REGISTERED = re.compile(rb"Connected to Spark cluster with app ID (app-[0-9]+-[0-9]+)")
_APPLICATION_ID = re.compile(r"app-[0-9]+-[0-9]+")
LOG_SCAN_LIMIT = 8 * 1024 * 1024
"""Bytes of the driver's log searched for its application id: it is written as Spark starts."""
_SCAN_CHUNK = 1024 * 1024


class StandaloneLauncher(SparkSubmitLauncher):
    """Runs standard jobs against ``master_url``, in client mode or in cluster mode through its
    REST submission server at ``rest_url`` (default ``http://<master host>:6066``); the master's
    web UI at ``master_web_url`` (default ``http://<master host>:8080``) lists its workers, whose
    executors' files are in ``worker_dirs`` when they are on this machine. singleNode jobs run
    as ``local[N]``."""

    def __init__(
        self,
        *,
        master_url: str,
        worker_dirs: Sequence[Path | str] = (),
        rest_url: str | None = None,
        master_web_url: str | None = None,
        toolchain: Toolchain | None = None,
        environment: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        driver_addresses: DriverAddresses = LOOPBACK_DRIVER,
    ) -> None:
        super().__init__(
            toolchain=toolchain,
            environment=environment,
            sandbox=sandbox,
            driver_addresses=driver_addresses,
        )
        self.master_url = master_url
        self.worker_dirs = tuple(Path(directory) for directory in worker_dirs)
        self.cluster = ClusterDrivers(
            master_url=master_url,
            rest_url=rest_url or default_rest_url(master_url),
            master_web_url=master_web_url or default_web_url(master_url),
            toolchain=lambda: self.toolchain,
        )

    def master_for(self, attempt: AttemptSpec) -> str:
        return master_for(attempt.job, attempt.driver, cluster_master=self.master_url)

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if attempt.job.spec.instance.in_cluster_mode:
            return self.cluster.submit(attempt)
        return super().submit(attempt)

    def poll(self, handle: DriverHandle) -> DriverHealth:
        if handle.submission_id is not None:
            return self.cluster.poll(handle)
        return super().poll(handle)

    def abort(self, handle: DriverHandle) -> None:
        if handle.submission_id is not None:
            self.cluster.abort(handle)
        else:
            super().abort(handle)

    def kill(self, handle: DriverHandle) -> None:
        if handle.submission_id is not None:
            self.cluster.kill(handle)
        else:
            super().kill(handle)

    def promote(self, handle: DriverHandle, *, start_at: datetime) -> None:
        """Client-mode drivers only: no cluster-mode driver is a standby (``submit`` refuses)."""
        if handle.submission_id is None:
            super().promote(handle, start_at=start_at)

    def standby_ready(self, handle: DriverHandle) -> bool:
        return handle.submission_id is None and super().standby_ready(handle)

    def locate(self, handle: DriverHandle) -> DriverHandle:
        """A cluster-mode driver's worker host and UI port once known (``DriverLocator``)."""
        return self.cluster.locate(handle)

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth:
        if is_cluster_launch(directory):
            return self.cluster.recover(directory, fence)
        return super().recover(directory, fence)

    def log_files(self, handle: DriverHandle) -> dict[str, Path]:
        """The logs that are files on this machine: a client-mode driver's, and with
        ``worker_dirs`` its executors' and a cluster-mode driver's (see ``log_sources``)."""
        files = super().log_files(handle) if handle.submission_id is None else {}
        if handle.master.startswith("local") or not self.worker_dirs:
            return files
        for worker_dir in self.worker_dirs:
            if handle.submission_id is not None:
                files.update(driver_files(worker_dir / handle.submission_id))
        application_id = self.spark_application_id(handle)
        if application_id is not None:
            for worker_dir in self.worker_dirs:
                files.update(executor_logs(worker_dir / application_id))
        return files

    def log_sources(self, handle: DriverHandle) -> dict[str, LogSource]:
        """Every log of the driver and its executors, as files with ``worker_dirs``, else read
        from the workers over HTTP (``worker_logs.LogSources``)."""
        if self.worker_dirs or handle.master.startswith("local"):
            return {name: LocalLog(path) for name, path in self.log_files(handle).items()}
        sources: dict[str, LogSource]
        if handle.submission_id is not None:
            sources = self.cluster.driver_logs(handle)
        else:
            sources = {name: LocalLog(path) for name, path in super().log_files(handle).items()}
        application_id = self.spark_application_id(handle)
        if application_id is not None:
            sources.update(self._remote_executor_logs(handle, application_id))
        return sources

    def spark_application_id(self, handle: DriverHandle) -> str | None:
        """The Spark application id of the handle's driver, once the master gave it one."""
        saved = Path(handle.directory) / APPLICATION_ID_FILE
        with contextlib.suppress(OSError):
            text = saved.read_text(encoding="ascii").strip()
            if _APPLICATION_ID.fullmatch(text):
                return text
        found = spark_application_id(handle, timeout=1.0)
        if found is None or not _APPLICATION_ID.fullmatch(found):
            if handle.submission_id is not None:
                found = self.cluster.spark_application_id(handle)
            else:
                found = application_id_in_log(Path(handle.directory) / STDERR_FILE)
        if found is not None:
            with contextlib.suppress(OSError):
                saved.write_text(found + "\n", encoding="ascii")
        return found

    def _remote_executor_logs(
        self, handle: DriverHandle, application_id: str
    ) -> dict[str, LogSource]:
        """The executors' logs on the workers the master lists: where the driver's REST API
        says they are (only addresses of listed workers are taken), else where the live workers
        say they ran them."""
        workers = self.cluster.workers.listed()
        if workers is None:
            return {}
        urls = executor_log_urls(handle, timeout=1.0)
        placed: dict[str, Worker] = {}
        for executor_id, url in (urls or {}).items():
            worker = listed_worker(url, workers)
            query = query_of(url)
            if (
                worker is not None
                and query.get("appId") == application_id
                and query.get("executorId") == executor_id
            ):
                placed[executor_id] = worker
        if urls is None:
            placed = self.cluster.workers.executors_of(application_id, workers)
        return executor_logs_at(application_id, placed)


def driver_files(driver_dir: Path) -> dict[str, Path]:
    """``driver`` and ``driver-stdout`` of a cluster-mode driver's directory on a worker."""
    candidates = {"driver": driver_dir / "stderr", "driver-stdout": driver_dir / "stdout"}
    return {name: path for name, path in candidates.items() if path.is_file()}


def executor_logs(application_dir: Path) -> dict[str, Path]:
    """``executor-<id>`` (stderr) and ``executor-<id>-stdout`` of each executor directory of one
    application on one worker."""
    files: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for executor_dir in sorted(application_dir.iterdir()):
            if not executor_dir.is_dir():
                continue
            stderr, stdout = executor_dir / "stderr", executor_dir / "stdout"
            if stderr.is_file():
                files[f"executor-{executor_dir.name}"] = stderr
            if stdout.is_file():
                files[f"executor-{executor_dir.name}-stdout"] = stdout
    return files


def application_id_in_log(path: Path) -> str | None:
    """The application id a standalone driver logged as it registered with the master."""
    try:
        with path.open("rb") as log:
            tail = b""
            for _ in range(LOG_SCAN_LIMIT // _SCAN_CHUNK):
                chunk = log.read(_SCAN_CHUNK)
                if not chunk:
                    return None
                match = _REGISTERED.search(tail + chunk)
                if match:
                    return match.group(1).decode("ascii")
                tail = chunk[-200:]
    except OSError:
        return None
    return None
