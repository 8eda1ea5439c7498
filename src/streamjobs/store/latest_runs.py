"""What a job's status shows of its newest application, read for a whole page of jobs at once.

A list of jobs shows, for each, its newest application's id, name, state, start and figures.
Those six columns are read here rather than whole ``ApplicationRecord``s: a page of fifty jobs
otherwise decoded a hundred JSON columns and parsed five hundred timestamps it never showed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select, bindparam, func, select

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


def runs_by_job(rows: Iterable[Row[Any]]) -> dict[str, LatestRun]:
    """The rows of ``LATEST_RUNS`` as each job's ``LatestRun``, by job name."""
    return {
        job_name: LatestRun(id, name, AppState(state), created_at, triggered_by, latest or {})
        for job_name, id, name, state, created_at, triggered_by, latest in rows
    }


_NEWEST_RUN_NUMBERS = (
    select(ApplicationRow.job_name, func.max(ApplicationRow.run_number).label("run_number"))
    .where(ApplicationRow.job_name.in_(bindparam("job_names", expanding=True)))
    .group_by(ApplicationRow.job_name)
    .subquery()
)
LATEST_RUNS: Select[Any] = select(
    ApplicationRow.job_name,
    ApplicationRow.id,
    ApplicationRow.name,
    ApplicationRow.state,
    ApplicationRow.created_at,
    ApplicationRow.triggered_by,
    ApplicationRow.latest,
).join(
    _NEWEST_RUN_NUMBERS,
    (ApplicationRow.job_name == _NEWEST_RUN_NUMBERS.c.job_name)
    & (ApplicationRow.run_number == _NEWEST_RUN_NUMBERS.c.run_number),
)
"""Each job's (of the ``job_names`` bound) newest application: the job's name and the columns of
a ``LatestRun``. Built once: a statement is immutable, and building one costs about what running
it does."""
