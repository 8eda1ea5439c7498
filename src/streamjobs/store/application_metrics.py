"""What a Prometheus scrape reads of the applications: each job's newest application, in one
statement.

A scrape comes every few seconds and wants every job at once, so it gets one row per job (the
newest run, joined to the job's row as job lists join it, ``latest_runs``) with only the columns
the metrics show: no spec, no tags, no other run of the job. The number of rows, and so of the
series they become, grows with the jobs, never with their history.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select

from streamjobs.domain.states import AppState
from streamjobs.store.base import Repository
from streamjobs.store.latest_runs import LATEST_RUN, is_latest_run_of
from streamjobs.store.tables import JobRow


@dataclass(frozen=True)
class ApplicationMetricsRecord:
    """A job's newest application as the metrics show it."""

    job: str
    bundle: str
    """The job's bundle (as it is now)."""
    namespace: str
    application: str
    """The application's name, ``<job>-<run number>``."""
    state: AppState
    restarts: int
    last_heartbeat_at: datetime | None
    """When its driver last reported anything."""
    latest: dict[str, Any]
    """The latest figures reported (``domain.progress``)."""


_NEWEST_APPLICATIONS: Select[Any] = (
    select(
        JobRow.name,
        JobRow.bundle,
        JobRow.namespace,
        LATEST_RUN.name,
        LATEST_RUN.state,
        LATEST_RUN.restarts,
        LATEST_RUN.last_heartbeat_at,
        LATEST_RUN.latest,
    )
    .join(LATEST_RUN, is_latest_run_of(JobRow.name))
    .order_by(JobRow.name)
)


class ApplicationMetricsRepository(Repository):
    """Reads the applications' figures for a scrape."""

    def newest_per_job(self) -> builtins.list[ApplicationMetricsRecord]:
        """Every job's newest application, by job name (a job never run has none)."""
        return [
            ApplicationMetricsRecord(
                job=job,
                bundle=bundle,
                namespace=namespace,
                application=application,
                state=AppState(state),
                restarts=int(restarts or 0),
                last_heartbeat_at=last_heartbeat_at,
                latest=latest or {},
            )
            for (
                job,
                bundle,
                namespace,
                application,
                state,
                restarts,
                last_heartbeat_at,
                latest,
            ) in self._read(_NEWEST_APPLICATIONS).all()
        ]
