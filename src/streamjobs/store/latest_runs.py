"""What a job's status shows of its newest application, joined to the job's row as it is read.

A job's status shows its newest application's id, name, state, start, figures and the job
version it runs. Those seven columns are joined to the job's own row (by the id of the job's
highest run number, found through the ``(job_name, run_number)`` index) rather than read as
whole ``ApplicationRecord``s in a second statement: a page of fifty jobs is then one round trip,
and no JSON column it never shows is decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Label, Row, select
from sqlalchemy.orm import QueryableAttribute, aliased

from streamjobs.domain.states import AppState
from streamjobs.store.tables import ApplicationRow


@dataclass(frozen=True)
class LatestRun:
    """A job's newest application as the job's status shows it."""

    id: str
    name: str
    state: AppState
    created_at: datetime
    triggered_by: str
    latest: dict[str, Any]
    """The latest figures reported, e.g. ``inputRowsPerSecond``."""
    job_version: int | None = None
    """The version of the job its spec came from (None when not known)."""


LATEST_RUN = aliased(ApplicationRow, name="latest_run")
"""The applications table as the newest run of the job it is joined to."""
LATEST_RUN_COLUMNS: tuple[Label[Any], ...] = (
    LATEST_RUN.id.label("run_id"),
    LATEST_RUN.name.label("run_name"),
    LATEST_RUN.state.label("run_state"),
    LATEST_RUN.created_at.label("run_created_at"),
    LATEST_RUN.triggered_by.label("run_triggered_by"),
    LATEST_RUN.latest.label("run_latest"),
    LATEST_RUN.job_version.label("run_job_version"),
)
"""The columns a ``LatestRun`` is made of, labelled apart from the job's own."""


def is_latest_run_of(job_name: ColumnElement[Any] | QueryableAttribute[str]) -> ColumnElement[bool]:
    """The condition joining ``LATEST_RUN`` to the job named by ``job_name`` (its newest run)."""
    runs = aliased(ApplicationRow, name="runs")
    newest = (
        select(runs.id)
        .where(runs.job_name == job_name)
        .order_by(runs.run_number.desc())
        .limit(1)
        .scalar_subquery()
    )
    return LATEST_RUN.id == newest


def latest_run_of(row: Row[Any]) -> LatestRun | None:
    """The ``LatestRun`` in a row read with ``LATEST_RUN_COLUMNS``; None for a job never run."""
    if row.run_id is None:
        return None
    return LatestRun(
        row.run_id,
        row.run_name,
        AppState(row.run_state),
        row.run_created_at,
        row.run_triggered_by,
        row.run_latest or {},
        row.run_job_version,
    )
