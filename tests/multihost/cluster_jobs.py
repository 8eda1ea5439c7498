"""What the end-to-end tests on the namespace cluster share: `deployment: standard` jobs (rate or
Kafka into Parquet) that fit its workers, what the Spark master and workers say about drivers
and executors, what a job committed, and waits that fail saying what they saw.

The workers offer 2 cores and 2 GB each (``tests/multihost/cluster.py``). A driver is the
``small`` node type (1 core, 1 GB); every executor is ``tiny`` (1 core, 512 MB, made by
``add_tiny_node_type``), so a cluster-mode driver and an executor fit on one worker, and two
executors of a client-mode driver land one on each worker (the master spreads an application's
executors over the workers with the most free cores).

Checkpoints and outputs are under the server's data root, a directory every host sees at the
same path (the hosts are namespaces of one machine): the shared file system a cluster needs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

from streamjobs.devtools.netns import Host
from tests.e2e.windowed_counts import TERMINAL, application, events
from tests.multihost.cluster import NetnsCluster
from tests.spark.pipelines import pipeline_job

EXECUTOR_NODE_TYPE = "tiny"
OUTPUT = "rows"
"""The output's name, and so its query's sub-directory of the checkpoint."""
RECORD_SCHEMA = "id BIGINT, phase INT"
WAIT_SECONDS = 300.0


def add_tiny_node_type(api: httpx.Client) -> None:
    answer = api.put(f"/api/v1/node-types/{EXECUTOR_NODE_TYPE}", json={"cores": 1, "memoryMb": 512})
    assert answer.is_success, answer.text


def standard_instance(deploy_mode: str, executors: int) -> dict[str, Any]:
    return {
        "deployment": "standard",
        "deployMode": deploy_mode,
        "driver": "small",
        "executor": EXECUTOR_NODE_TYPE,
        "executors": executors,
    }


def rate_job(
    name: str, data: Path, *, deploy_mode: str, executors: int, restart: dict[str, Any]
) -> dict[str, Any]:
    """Spark's rate source (5 rows a second) into Parquet, a batch a second, on the cluster."""
    job = pipeline_job(
        name,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        checkpointLocation=checkpoint_of(data, name).as_uri(),
        inputs=[{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 5}}],
        steps=[[(OUTPUT, "SELECT timestamp, value FROM ticks")]],
        outputs=[{"name": OUTPUT, "format": "parquet", "path": output_of(data, name).as_uri()}],
    )
    return _on_cluster(job, deploy_mode=deploy_mode, executors=executors, restart=restart)


def kafka_job(
    name: str, topic: str, data: Path, *, deploy_mode: str, executors: int, restart: dict[str, Any]
) -> dict[str, Any]:
    """Kafka JSON records (``RECORD_SCHEMA``) into Parquet, EXACTLY_ONCE, at most 10 records a
    batch and a batch a second, so that a few hundred records take a while."""
    job = pipeline_job(
        name,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        guarantee="EXACTLY_ONCE",
        checkpointLocation=checkpoint_of(data, name).as_uri(),
        inputs=[
            {
                "name": "records",
                "format": "kafkajson",
                "dataset": f"kafka-main:{topic}",
                "schema": RECORD_SCHEMA,
                "options": {"startingOffsets": "earliest", "maxOffsetsPerTrigger": 10},
            }
        ],
        steps=[[(OUTPUT, "SELECT id, phase FROM records")]],
        outputs=[{"name": OUTPUT, "format": "parquet", "path": output_of(data, name).as_uri()}],
    )
    return _on_cluster(job, deploy_mode=deploy_mode, executors=executors, restart=restart)


def _on_cluster(
    job: dict[str, Any], *, deploy_mode: str, executors: int, restart: dict[str, Any]
) -> dict[str, Any]:
    spec = job["spec"]
    spec["pipeline"]["logLevel"] = "WARN"
    spec["instance"] = standard_instance(deploy_mode, executors)
    spec["restartPolicy"] = restart
    spec["configuration"] = {"sparkConf": {"spark.sql.shuffle.partitions": "2"}}
    return job


def checkpoint_of(data: Path, name: str) -> Path:
    return data / name / "checkpoint"


def output_of(data: Path, name: str) -> Path:
    return data / name / "out"


# -- what the job wrote -----------------------------------------------------------------------


def batches(checkpoint: Path, kind: str) -> set[int]:
    """The batch ids in the query checkpoint's ``offsets`` (started) or ``commits`` (done)."""
    folder = checkpoint / OUTPUT / kind
    if not folder.is_dir():
        return set()
    return {int(entry.name) for entry in folder.iterdir() if entry.name.isdigit()}


def last_commit(checkpoint: Path) -> int:
    """The newest committed batch, -1 before the first."""
    return max(batches(checkpoint, "commits"), default=-1)


def committed_files(output: Path) -> set[str]:
    """The data files the Parquet sink's log (``_spark_metadata``) says are committed."""
    log = output / "_spark_metadata"
    files: set[str] = set()
    if not log.is_dir():
        return files
    for entry in log.iterdir():
        if entry.name.split(".")[0].isdigit():
            for line in entry.read_text().splitlines()[1:]:  # the first line is the version
                if '"action":"add"' in line:
                    files.add(line.split('"path":"', 1)[1].split('"', 1)[0])
    return files


# -- the cluster ------------------------------------------------------------------------------


def master_state(cluster: NetnsCluster) -> dict[str, Any]:
    """The master's ``/json/``: workers, active and completed applications and drivers."""
    state: dict[str, Any] = cluster.spark.status()
    assert state, f"the Spark master at {cluster.web_url} does not answer"
    return state


def active_driver_ids(cluster: NetnsCluster) -> list[str]:
    """The cluster-mode drivers the master has running (or waiting for a worker)."""
    return sorted(str(driver["id"]) for driver in master_state(cluster).get("activedrivers", []))


def completed_driver_state(cluster: NetnsCluster, submission_id: str) -> str | None:
    """How the master says the driver ``submission_id`` ended (None: it has not ended)."""
    for driver in master_state(cluster).get("completeddrivers", []):
        if driver.get("id") == submission_id:
            return str(driver.get("state"))
    return None


def driver_worker_host(cluster: NetnsCluster, submission_id: str) -> str | None:
    """The address of the worker the master runs the driver ``submission_id`` on."""
    state = master_state(cluster)
    workers = {worker["id"]: worker["host"] for worker in state.get("workers", [])}
    for driver in state.get("activedrivers", []):
        if driver.get("id") == submission_id:
            return workers.get(driver.get("worker"))
    return None


def active_application_ids(cluster: NetnsCluster) -> set[str]:
    return {str(app["id"]) for app in master_state(cluster).get("activeapps", [])}


def executors_at_workers(cluster: NetnsCluster, spark_application_id: str) -> dict[str, str]:
    """Which worker (by host address) runs each executor of the Spark application, as the
    workers' own ``/json/`` lists them."""
    found = {}
    for host in cluster.workers:
        state = httpx.get(f"{cluster.worker_web_urls[host.name]}/json/", timeout=10).json()
        for executor in state.get("executors", []):
            if executor.get("appid") == spark_application_id:
                found[str(executor["id"])] = host.address
    return found


def other_worker(cluster: NetnsCluster, address: str) -> tuple[Host, Host]:
    """The worker at ``address`` and the other one."""
    (this,) = [host for host in cluster.workers if host.address == address]
    (other,) = [host for host in cluster.workers if host.address != address]
    return this, other


# -- applications -----------------------------------------------------------------------------


def active_executors(app: dict[str, Any]) -> dict[str, str]:
    """The application's active executors (the driver's entry left out), by id, with their host,
    as its figures have them."""
    figures = app.get("executors") or {}
    return {
        str(executor["id"]): str(executor["host"])
        for executor in figures.get("executors", [])
        if executor["is_active"] and executor["id"] != "driver"
    }


def latest_attempt(app: dict[str, Any]) -> dict[str, Any]:
    attempt: dict[str, Any] = app["attempts"][-1]
    return attempt


def running_attempt(api: httpx.Client, application_id: str, number: int) -> Callable[[], Any]:
    """The application while it runs attempt ``number`` and its driver's host is known;
    failing at once when the application ended."""

    def check() -> dict[str, Any] | None:
        app = application(api, application_id)
        if app["state"] in TERMINAL:
            raise AssertionError(
                f"{app['name']} ended {app['state']} ({app['errorMessage']!r}) instead of running "
                f"attempt {number}: {events(api, application_id)}"
            )
        attempts = app["attempts"]
        running = (
            app["state"] == "RUNNING"
            and len(attempts) == number
            and attempts[-1]["driverHost"]
            and attempts[-1]["runningAt"]
        )
        return app if running else None

    return check


def wait_until(
    what: str,
    check: Callable[[], Any],
    describe: Callable[[], str] = lambda: "",
    *,
    seconds: float = WAIT_SECONDS,
) -> Any:
    """``check()``'s first true answer; failing after ``seconds`` with ``describe()``."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}: {describe()}")
        time.sleep(0.5)


def driver_processes(home: Path) -> list[psutil.Process]:
    """The live driver wrappers (client-mode drivers) whose attempt directories are under
    ``home``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            cmdline = process.info["cmdline"] or []
            if "streamjobs.launch.wrapper" in cmdline and any(str(home) in p for p in cmdline):
                found.append(process)
    return found
