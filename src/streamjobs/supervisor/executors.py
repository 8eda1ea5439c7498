"""When the supervisor asks a driver's Spark REST API about its executors.

Every tick while a driver starts (its answer is how a program that does not report is seen to
run), then every ``EXECUTOR_POLL_SECONDS``. A driver that reports (a pipeline's runner) is not
asked while it starts up: its first report says it runs, and the first request to Spark's REST
API costs the driver a burst of CPU (its JAX-RS stack starts then), which a small machine takes
from the query's start and first micro-batch. It is asked once the attempt's first micro-batch
is committed, or ``REPORT_GRACE_SECONDS`` after it was submitted, or after its hold ended when it
was submitted early to hold its queries (its reports may not reach this server, or its first
batch is a long one).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from streamjobs.domain.states import AppState
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.spark_ui import ExecutorFigures
from streamjobs.store import ApplicationRecord, AttemptRecord

EXECUTOR_POLL_SECONDS = 5.0
REPORT_GRACE_SECONDS = 60.0
"""How long a reporting driver is left to start before its REST API is asked anyway."""

ExecutorReader = Callable[[DriverHandle], ExecutorFigures | None]


class ExecutorPolls:
    """Reads drivers' executors through ``reader``, no more often than they are due."""

    def __init__(self, reader: ExecutorReader) -> None:
        self._reader = reader
        self._polled: dict[str, datetime] = {}
        """application id -> when its driver was last asked."""

    def due(
        self,
        application: ApplicationRecord,
        attempt: AttemptRecord,
        now: datetime,
        *,
        reports: bool,
    ) -> bool:
        """Whether to ask the driver of ``application``'s ``attempt`` now."""
        if reports and not past_start_up(application, attempt, now):
            return False
        last = self._polled.get(application.id)
        return (
            application.state == AppState.STARTING
            or last is None
            or (now - last).total_seconds() >= EXECUTOR_POLL_SECONDS
        )

    def read(
        self, application_id: str, handle: DriverHandle, now: datetime
    ) -> ExecutorFigures | None:
        """The driver's executors now (None: no answer); the next read is due from ``now``."""
        self._polled[application_id] = now
        return self._reader(handle)


def past_start_up(application: ApplicationRecord, attempt: AttemptRecord, now: datetime) -> bool:
    """Whether a reporting driver's attempt committed its first micro-batch, or was submitted
    (or ended its hold) ``REPORT_GRACE_SECONDS`` ago."""
    latest = application.latest or {}
    if latest.get("attempt") == attempt.number and "firstBatchCommittedAt" in latest:
        return True
    started = attempt.reporting_since
    held_until = application.next_attempt_at
    if application.state == AppState.STARTING and held_until is not None:
        started = max(started, held_until)
    return (now - started).total_seconds() >= REPORT_GRACE_SECONDS
