"""When a driver's streaming queries last committed a micro-batch, from its Spark REST API.

A python or jvm program reports nothing to the server, so its ``stalledSeconds`` health rules
are judged on what its driver's REST API says. Spark has no Structured Streaming endpoint
(``/api/v1/applications/<id>/streaming/...`` serves only the old DStream API and answers 404 for
a Structured Streaming query, checked on a PySpark 4.1 driver), but every Spark job a
micro-batch runs is described as ``id = <query id>\\nrunId = <run id>\\nbatch = <n>``: the latest
completion time of a succeeded job that names a batch is when the program last made streaming
progress. ``/jobs?status=succeeded`` lists them newest first, each with its ``completionTime``.

A micro-batch that reads no data runs no Spark job, so an idle program looks as stalled as a
stuck one: a program's stall rule needs a threshold longer than its quiet spells.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from streamjobs.launch.base import DriverHandle
from streamjobs.launch.spark_ui import driver_api_url

MICRO_BATCH_DESCRIPTION = re.compile(r"runId = \S+\s+batch = \d+")
"""How Spark describes the jobs of a streaming query's micro-batch."""


@dataclass(frozen=True)
class StreamingProgress:
    """What the driver's REST API said of its streaming queries."""

    last_batch_at: datetime | None
    """When its latest micro-batch job completed (None: none has yet)."""


StreamingProgressReader = Callable[[DriverHandle], StreamingProgress | None]
"""Reads a driver's streaming progress (None: its REST API does not answer)."""


def read_streaming_progress(handle: DriverHandle, timeout: float = 2.0) -> StreamingProgress | None:
    """The driver's streaming progress now, asked at its REST API (``spark_ui.driver_api_url``);
    None when that does not answer or is not known yet."""
    base_url = driver_api_url(handle)
    if base_url is None:
        return None
    try:
        with httpx.Client(
            base_url=base_url,
            timeout=timeout,
            follow_redirects=True,
            trust_env=False,
        ) as client:
            applications = client.get("/applications")
            applications.raise_for_status()
            listed = applications.json()
            if not isinstance(listed, list) or not listed or not isinstance(listed[0], dict):
                return None
            jobs = client.get(
                f"/applications/{listed[0]['id']}/jobs", params={"status": "succeeded"}
            )
            jobs.raise_for_status()
            summaries = jobs.json()
    except (httpx.HTTPError, ValueError, KeyError):
        return None
    if not isinstance(summaries, list):
        return None
    return StreamingProgress(last_micro_batch_completion(summaries))


def last_micro_batch_completion(jobs: Iterable[Any]) -> datetime | None:
    """The latest ``completionTime`` of the succeeded jobs that belong to a micro-batch."""
    times = [
        _spark_time(job.get("completionTime"))
        for job in jobs
        if isinstance(job, dict)
        and job.get("status", "SUCCEEDED") == "SUCCEEDED"
        and MICRO_BATCH_DESCRIPTION.search(str(job.get("description") or ""))
    ]
    known = [at for at in times if at is not None]
    return max(known, default=None)


def _spark_time(value: Any) -> datetime | None:
    """Spark's REST times, e.g. ``2026-11-26T22:17:03.726GMT``."""
    if not isinstance(value, str):
        return None
    text = value.removesuffix("GMT")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
