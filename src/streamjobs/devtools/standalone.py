"""A Spark standalone cluster whose master and workers each run on their own host of a
``PrivateNetwork``, for tests of client and cluster deploy mode across hosts.

Spark's own daemons are run (``<spark_home>/bin/spark-class`` with the ``Master`` and ``Worker``
classes of the pyspark install) inside the hosts' namespaces, each with ``SPARK_LOCAL_IP`` set to
its host's address, in its own process group, its output in ``<directory>/<host>.log``. The
master listens on the standard ports of its host (7077, web UI 8080) and runs the REST submission
server (6066) that cluster deploy mode submits through; every worker's web UI is on 8081 of its
host, its work directory (drivers' and executors' logs) under ``<directory>``. Master and workers
share a short ``spark.worker.timeout``, so a lost worker is reported DEAD within seconds.

    spark = StandaloneSpark(tmp_dir).start_master(master_host)
    spark.add_worker(w1, cores=2, memory="2g")
    spark.wait_until_alive()
    ... spark.master_url, spark.rest_url ...
    spark.lose_worker(worker, network)   # its host is gone; the master says DEAD soon
    spark.stop()
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from streamjobs.devtools.netns import Host, PrivateNetwork
from streamjobs.domain.errors import StreamjobsError
from streamjobs.launch.command import Toolchain

MASTER_PORT = 7077
MASTER_WEB_PORT = 8080
REST_PORT = 6066
WORKER_WEB_PORT = 8081
DEFAULT_WORKER_TIMEOUT_SECONDS = 10
STOP_GRACE_SECONDS = 10.0
POLL_SECONDS = 0.3
LOG_LINES_IN_ERRORS = 30
MEMORY = re.compile(r"^[1-9][0-9]*[mg]$")
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterStartError(StreamjobsError):
    """The standalone cluster was asked for something wrong, or did not come up."""

    title = "Spark standalone cluster failed"


@dataclass(frozen=True)
class SparkDaemon:
    """A master or worker process on its host."""

    host: Host
    process: subprocess.Popen[bytes]
    log_file: Path

    def log_tail(self) -> str:
        if not self.log_file.is_file():
            return f"(no log at {self.log_file})"
        lines = self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join([f"last lines of {self.log_file}:", *lines[-LOG_LINES_IN_ERRORS:]])


@dataclass(frozen=True)
class SparkWorker:
    daemon: SparkDaemon
    cores: int
    memory: str
    work_dir: Path

    @property
    def host(self) -> Host:
        return self.daemon.host

    @property
    def web_url(self) -> str:
        return f"http://{self.host.address}:{WORKER_WEB_PORT}"


class StandaloneSpark:
    """One master and its workers, each on its own host; files under ``directory``."""

    def __init__(
        self,
        directory: Path,
        *,
        spark_home: Path | None = None,
        worker_timeout_seconds: int = DEFAULT_WORKER_TIMEOUT_SECONDS,
        startup_timeout: float = 120.0,
        java_options: str = "",
    ) -> None:
        if worker_timeout_seconds < 1:
            raise ClusterStartError(
                f"worker_timeout_seconds: {worker_timeout_seconds} is not a positive number "
                "of seconds"
            )
        self.directory = directory
        self.spark_home = spark_home or Toolchain.installed().spark_home
        self.worker_timeout_seconds = worker_timeout_seconds
        self.startup_timeout = startup_timeout
        self.java_options = java_options
        """JVM options of the daemons and of every JVM a worker starts (executors, cluster-mode
        drivers), which inherit its environment: ``JDK_JAVA_OPTIONS``, read by ``java``."""
        self.master: SparkDaemon | None = None
        self.workers: list[SparkWorker] = []

    @property
    def master_host(self) -> Host:
        if self.master is None:
            raise ClusterStartError("the standalone master is not started; call start_master()")
        return self.master.host

    @property
    def master_url(self) -> str:
        """``spark://<address>:7077``, for ``--master`` and STREAMJOBS_SPARK_MASTER."""
        return f"spark://{self.master_host.address}:{MASTER_PORT}"

    @property
    def rest_url(self) -> str:
        """The master's REST submission server, for cluster deploy mode."""
        return f"http://{self.master_host.address}:{REST_PORT}"

    @property
    def web_url(self) -> str:
        """The master's web UI; ``<web_url>/json/`` describes the cluster."""
        return f"http://{self.master_host.address}:{MASTER_WEB_PORT}"

    @property
    def worker_web_urls(self) -> dict[str, str]:
        """Each worker's web UI (where its logs are read), by host name."""
        return {worker.host.name: worker.web_url for worker in self.workers}

    def start_master(self, host: Host) -> StandaloneSpark:
        """Start the master on ``host``; it is ready once ``wait_until_alive`` returns."""
        if self.master is not None:
            raise ClusterStartError(f"the master already runs on {self.master.host.name}")
        options = (
            "-Dspark.master.rest.enabled=true",
            f"-Dspark.master.rest.port={REST_PORT}",
            f"-Dspark.worker.timeout={self.worker_timeout_seconds}",
        )
        self.master = self._launch(
            host,
            {"SPARK_MASTER_OPTS": " ".join(options)},
            MASTER_CLASS,
            *("--host", host.address, "--port", str(MASTER_PORT)),
            *("--webui-port", str(MASTER_WEB_PORT)),
        )
        return self

    def add_worker(self, host: Host, *, cores: int = 2, memory: str = "2g") -> SparkWorker:
        """Start a worker on ``host`` offering ``cores`` and ``memory`` (``512m``, ``2g``)."""
        if cores < 1:
            raise ClusterStartError(f"cores: {cores} is not a positive number of cores")
        if not MEMORY.match(memory):
            raise ClusterStartError(
                f"memory: {memory!r} is not an amount of memory such as '512m' or '2g'"
            )
        work_dir = self.directory / f"{host.name}-work"
        work_dir.mkdir(parents=True, exist_ok=True)
        daemon = self._launch(
            host,
            {"SPARK_WORKER_OPTS": f"-Dspark.worker.timeout={self.worker_timeout_seconds}"},
            WORKER_CLASS,
            self.master_url,
            *("--host", host.address, "--cores", str(cores), "--memory", memory),
            *("--work-dir", str(work_dir), "--webui-port", str(WORKER_WEB_PORT)),
        )
        worker = SparkWorker(daemon=daemon, cores=cores, memory=memory, work_dir=work_dir)
        self.workers.append(worker)
        return worker

    def lose_worker(self, worker: SparkWorker, network: PrivateNetwork) -> None:
        """Lose ``worker``'s host (``network.tear_down``): the master notices once
        ``spark.worker.timeout`` passes without heartbeats, and reports the worker DEAD."""
        network.tear_down(worker.host)
        worker.daemon.process.wait()
        self.workers.remove(worker)

    def wait_until_alive(self) -> None:
        """Wait until the master answers and reports every started worker ALIVE."""
        deadline = time.monotonic() + self.startup_timeout
        wanted = {worker.host.address for worker in self.workers}
        while True:
            self._fail_if_exited()
            alive = {
                entry.get("host")
                for entry in self.workers_at_master()
                if entry.get("state") == "ALIVE"
            }
            if self.status().get("status") == "ALIVE" and wanted <= alive:
                return
            if time.monotonic() > deadline:
                missing = ", ".join(sorted(address for address in wanted - alive)) or "none"
                raise ClusterStartError(
                    f"the standalone cluster was not up after {self.startup_timeout:.0f}s "
                    f"(workers not ALIVE: {missing}); logs in {self.directory}"
                )
            time.sleep(POLL_SECONDS)

    def status(self) -> dict[str, Any]:
        """The master's ``/json/`` document, or ``{}`` while it does not answer."""
        try:
            response = httpx.get(f"{self.web_url}/json/", timeout=2)
            document = response.json()
        except (httpx.HTTPError, ValueError):
            return {}
        return document if isinstance(document, dict) else {}

    def workers_at_master(self) -> list[dict[str, Any]]:
        """The master's record of each worker it knows (``host``, ``state``, ``cores``...)."""
        workers = self.status().get("workers", [])
        return [entry for entry in workers if isinstance(entry, dict)]

    def worker_state(self, worker: SparkWorker) -> str | None:
        """What the master says of ``worker`` (ALIVE, DEAD...), None if it does not know it;
        the latest registration of the worker's address counts."""
        states = [
            str(entry.get("state"))
            for entry in self.workers_at_master()
            if entry.get("host") == worker.host.address
        ]
        return ("ALIVE" if "ALIVE" in states else states[-1]) if states else None

    def kill_submitted_drivers(self) -> list[str]:
        """Ask the REST server to kill every driver submitted in cluster deploy mode that the
        master still lists as active (a test's leftovers); their ids."""
        killed = []
        for driver in self.status().get("activedrivers", []):
            driver_id = str(driver.get("id", "")) if isinstance(driver, dict) else ""
            if driver_id:
                with contextlib.suppress(httpx.HTTPError):
                    httpx.post(f"{self.rest_url}/v1/submissions/kill/{driver_id}", timeout=5)
                    killed.append(driver_id)
        return killed

    def stop(self) -> None:
        """SIGTERM every daemon's process group, SIGKILL what is left after a grace period."""
        daemons = [worker.daemon for worker in self.workers]
        if self.master is not None:
            daemons.append(self.master)
        for daemon in daemons:
            _signal_group(daemon.process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for daemon in daemons:
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            _signal_group(daemon.process, signal.SIGKILL)
            daemon.process.wait()
        self.workers.clear()
        self.master = None

    def _launch(
        self, host: Host, options: dict[str, str], main_class: str, *arguments: str
    ) -> SparkDaemon:
        self.directory.mkdir(parents=True, exist_ok=True)
        conf_dir = self.directory / "conf"  # empty: no stray spark-defaults.conf applies
        conf_dir.mkdir(exist_ok=True)
        environment = {
            **os.environ,
            "SPARK_HOME": str(self.spark_home),
            "SPARK_CONF_DIR": str(conf_dir),
            "SPARK_LOCAL_IP": host.address,
            **({"JDK_JAVA_OPTIONS": self.java_options} if self.java_options else {}),
            **options,
        }
        log_file = self.directory / f"{host.name}.log"
        spark_class = str(self.spark_home / "bin" / "spark-class")
        with log_file.open("ab") as log:
            process = subprocess.Popen(
                host.command([spark_class, main_class, *arguments]),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
            )
        return SparkDaemon(host=host, process=process, log_file=log_file)

    def _fail_if_exited(self) -> None:
        daemons = [worker.daemon for worker in self.workers]
        if self.master is not None:
            daemons.insert(0, self.master)
        for daemon in daemons:
            if daemon.process.poll() is not None:
                raise ClusterStartError(
                    f"the Spark daemon on {daemon.host.name} exited with code "
                    f"{daemon.process.returncode}\n{daemon.log_tail()}"
                )


def _signal_group(process: subprocess.Popen[bytes], signal_number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal_number)
