"""What a running driver says about its executors, read from its Spark REST API.

Every driver serves Spark's UI and REST API at the host and port its ``DriverHandle`` records
(``driver_api_url``): 127.0.0.1 for a local driver, the advertised address of a client-mode one,
the worker's address of a cluster-mode one once its port is known. ``read_executors`` turns
``/api/v1/applications/<id>/allexecutors`` into plain figures the server can store and show
(tasks, task time, shuffle, memory, GC...), and gives None when the driver does not answer: it
is starting, ending, or gone.

Executors come and go (dynamic allocation gives idle ones back, a lost worker takes its own), so
the figures list the removed ones too, inactive (Spark keeps the last
``spark.ui.retainedDeadExecutors``, 100): what they did still counts in the application's totals,
while ``running_executors`` and the gauges (memory, disk, cores) count the active ones.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import httpx

from streamjobs.launch.base import DriverHandle

DRIVER_EXECUTOR_ID = "driver"


@dataclass(frozen=True)
class ExecutorMetrics:
    """One executor (or the driver, id ``driver``) as Spark counts it, bytes and milliseconds."""

    id: str
    host: str
    is_active: bool
    total_cores: int
    completed_tasks: int
    failed_tasks: int
    task_time_ms: int
    shuffle_read_bytes: int
    shuffle_write_bytes: int
    memory_used_bytes: int
    disk_used_bytes: int
    gc_time_ms: int
    rdd_blocks: int
    input_bytes: int
    memory_spilled_bytes: int
    disk_spilled_bytes: int

    @classmethod
    def from_summary(cls, summary: dict[str, Any]) -> ExecutorMetrics:
        """From one entry of Spark's ``ExecutorSummary`` list."""
        host, _, _ = str(summary.get("hostPort", "")).rpartition(":")
        return cls(
            id=str(summary["id"]),
            host=host or str(summary.get("hostPort", "")),
            is_active=bool(summary.get("isActive", False)),
            total_cores=_count(summary, "totalCores"),
            completed_tasks=_count(summary, "completedTasks"),
            failed_tasks=_count(summary, "failedTasks"),
            task_time_ms=_count(summary, "totalDuration"),
            shuffle_read_bytes=_count(summary, "totalShuffleRead"),
            shuffle_write_bytes=_count(summary, "totalShuffleWrite"),
            memory_used_bytes=_count(summary, "memoryUsed"),
            disk_used_bytes=_count(summary, "diskUsed"),
            gc_time_ms=_count(summary, "totalGCTime"),
            rdd_blocks=_count(summary, "rddBlocks"),
            input_bytes=_count(summary, "totalInputBytes"),
            memory_spilled_bytes=_count(summary, "memoryBytesSpilled"),
            disk_spilled_bytes=_count(summary, "diskBytesSpilled"),
        )

    @property
    def is_driver(self) -> bool:
        return self.id == DRIVER_EXECUTOR_ID


@dataclass(frozen=True)
class ExecutorFigures:
    """A driver's Spark application and its executors, the driver's own entry included.

    ``running_executors`` counts active executors other than the driver (0 for local[N], where
    the driver runs every task). ``pending_executors`` is None: Spark's REST API does not say
    how many executors were asked for and not granted yet.
    """

    spark_application_id: str
    executors: tuple[ExecutorMetrics, ...]
    running_executors: int
    pending_executors: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable values."""
        return asdict(self)


def read_executors(handle: DriverHandle, timeout: float = 2.0) -> ExecutorFigures | None:
    """The driver's executors now; None when its REST API does not answer."""
    found = _all_executors(handle, timeout)
    if found is None:
        return None
    application_id, summaries = found
    executors = tuple(
        ExecutorMetrics.from_summary(summary)
        for summary in summaries
        if isinstance(summary, dict) and "id" in summary
    )
    return ExecutorFigures(
        spark_application_id=application_id,
        executors=executors,
        running_executors=sum(1 for e in executors if e.is_active and not e.is_driver),
    )


def _all_executors(handle: DriverHandle, timeout: float) -> tuple[str, list[Any]] | None:
    """The driver's Spark application id and its ``allexecutors`` summaries (also executors
    that came and went); None when its REST API does not answer as it should."""
    try:
        with _client(handle, timeout) as client:
            application_id = _application_id(client)
            if application_id is None:
                return None
            response = client.get(f"/applications/{application_id}/allexecutors")
            response.raise_for_status()
            summaries = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(summaries, list):
        return None
    return application_id, summaries


def spark_application_id(handle: DriverHandle, timeout: float = 2.0) -> str | None:
    """The driver's Spark application id (``local-…``, ``app-…``); None when it does not answer."""
    try:
        with _client(handle, timeout) as client:
            return _application_id(client)
    except (httpx.HTTPError, ValueError):
        return None


def executor_log_urls(handle: DriverHandle, timeout: float = 2.0) -> dict[str, str] | None:
    """The stderr log page of each executor the driver has had (``allexecutors``: also those
    that came and went), by executor id, as Spark links them (a worker UI's ``/logPage/``);
    None when the driver's REST API does not answer. The driver's own entry is left out."""
    found = _all_executors(handle, timeout)
    if found is None:
        return None
    _, summaries = found
    urls = {}
    for summary in summaries:
        if not isinstance(summary, dict) or summary.get("id") in (None, DRIVER_EXECUTOR_ID):
            continue
        links = summary.get("executorLogs")
        if isinstance(links, dict) and isinstance(links.get("stderr"), str):
            urls[str(summary["id"])] = links["stderr"]
    return urls


def driver_api_url(handle: DriverHandle) -> str | None:
    """The root of the driver's REST API (``http://<driver host>:<ui port>/api/v1``); None
    while its UI port is not known (a cluster-mode driver that has not started its UI yet)."""
    if not handle.ui_port or not handle.driver_host:
        return None
    host = handle.driver_host
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{host}:{handle.ui_port}/api/v1"


def _client(handle: DriverHandle, timeout: float) -> httpx.Client:
    """A client of the driver's REST API; ``httpx.ConnectError`` (as for a driver that does not
    answer) while its address is not known."""
    base_url = driver_api_url(handle)
    if base_url is None:
        raise httpx.ConnectError("the driver's UI port is not known yet")
    return httpx.Client(
        base_url=base_url,
        timeout=timeout,
        follow_redirects=True,
        trust_env=False,
    )


def _application_id(client: httpx.Client) -> str | None:
    response = client.get("/applications")
    response.raise_for_status()
    applications = response.json()
    if not isinstance(applications, list) or not applications:
        return None
    first = applications[0]
    return str(first["id"]) if isinstance(first, dict) and "id" in first else None


def _count(summary: dict[str, Any], key: str) -> int:
    value = summary.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0
