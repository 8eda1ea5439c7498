"""What the loop reads off an attempt's record: how to reach its driver, whether its driver has
reported, how its end was judged, and what its logs say caused its failure.

A cluster-mode driver's logs are on its worker: when it ends badly its launcher copies their
ends into the attempt directory (``launch.cluster.DRIVER_LOG_TAILS``, read from the worker over
HTTP as it polls the driver), and the failure's cause is read from those copies."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from streamjobs.domain.failure_causes import failure_cause
from streamjobs.domain.policy import Outcome
from streamjobs.launch.attempt_directory import STDERR_FILE, STDOUT_FILE
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.cluster import DRIVER_LOG_TAILS
from streamjobs.launch.driver_addresses import LOOPBACK_DRIVER
from streamjobs.launch.logs import tail_text
from streamjobs.store import ApplicationRecord, AttemptRecord

LOG_TAIL_BYTES = 64 * 1024
"""How much of the end of each of a failed driver's logs is searched for its cause."""


def handle_of(attempt: AttemptRecord) -> DriverHandle:
    """The handle the attempt's driver was started with, as recorded: a restarted server (or
    another one) polls, stops and reads it with this, a cluster-mode driver by its submission
    id."""
    assert attempt.pid is not None
    unknown_host = "" if attempt.submission_id else LOOPBACK_DRIVER.host
    return DriverHandle(
        pid=attempt.pid,
        started_at=attempt.process_started_at or 0.0,
        directory=attempt.directory,
        ui_port=attempt.ui_port or 0,
        master=attempt.master or "",
        driver_host=attempt.driver_host or unknown_host,
        submission_id=attempt.submission_id,
        launched_on=attempt.launched_on,
    )


def outcome_of(attempt: AttemptRecord | None) -> Outcome | None:
    """How the attempt was judged to have ended (None: not yet, or it was stopped or aborted)."""
    judged = (attempt.outcome or "").upper() if attempt else ""
    return Outcome(judged) if judged in Outcome.__members__ else None


def heartbeat_of(application: ApplicationRecord, attempt: AttemptRecord | None) -> datetime | None:
    """The last report of the latest attempt's driver (earlier attempts' reports do not count,
    nor those from before a standby driver's promotion)."""
    beat = application.last_heartbeat_at
    if beat is None or attempt is None or beat < attempt.reporting_since:
        return None
    return beat


def failure_cause_of(attempt: AttemptRecord | None) -> str | None:
    """The cause of the failure of an attempt that failed and is not judged yet, as the ends of
    its driver's stderr and stdout say it (a Python driver's traceback is in its stdout); None
    when they say none. Read once: the tick that sees the attempt ended judges it."""
    if attempt is None or attempt.ended_at is None or attempt.outcome or attempt.exit_code == 0:
        return None
    directory = Path(attempt.directory)
    if attempt.submission_id:
        stderr = directory / DRIVER_LOG_TAILS["driver"]
        stdout = directory / DRIVER_LOG_TAILS["driver-stdout"]
    else:
        stderr, stdout = directory / STDERR_FILE, directory / STDOUT_FILE
    return failure_cause(tail_text(stderr, LOG_TAIL_BYTES), tail_text(stdout, LOG_TAIL_BYTES))
