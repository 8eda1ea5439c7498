"""What the loop reads off an attempt's record: how to reach its driver, whether its driver has
reported, and how its end was judged."""

from __future__ import annotations

from datetime import datetime

from streamjobs.domain.policy import Outcome
from streamjobs.launch.base import DriverHandle
from streamjobs.store import ApplicationRecord, AttemptRecord


def handle_of(attempt: AttemptRecord) -> DriverHandle:
    assert attempt.pid is not None
    return DriverHandle(
        pid=attempt.pid,
        started_at=attempt.process_started_at or 0.0,
        directory=attempt.directory,
        ui_port=attempt.ui_port or 0,
        master=attempt.master or "",
    )


def outcome_of(attempt: AttemptRecord | None) -> Outcome | None:
    """How the attempt was judged to have ended (None: not yet, or it was stopped or aborted)."""
    judged = (attempt.outcome or "").upper() if attempt else ""
    return Outcome(judged) if judged in Outcome.__members__ else None


def heartbeat_of(application: ApplicationRecord, attempt: AttemptRecord | None) -> datetime | None:
    """The last report of the latest attempt's driver (earlier attempts' reports do not count)."""
    beat = application.last_heartbeat_at
    if beat is None or attempt is None or beat < attempt.submitted_at:
        return None
    return beat
