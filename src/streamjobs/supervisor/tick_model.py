"""The words of the supervisor's tick: what it observes of an application (``Observed``), what
it decides (``Action``), the requests a person may have made and the time limits it keeps.

Kept apart from the decisions themselves (``supervisor.reconcile``, ``supervisor.standby_ticks``)
so that each decision module imports the same vocabulary and none imports another's rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from streamjobs.domain.manifest import RestartPolicy
from streamjobs.domain.policy import Outcome, RetryCounters
from streamjobs.domain.snapshots import SnapshotRequest
from streamjobs.domain.states import AppEvent, AppState


class Request(StrEnum):
    """What a person asked of a live application."""

    ABORT = "abort"
    STOP = "stop"
    SUSPEND = "suspend"
    """A graceful stop with an aligned snapshot that leaves the application SUSPENDED."""
    RESTART = "restart"
    """Not a person's: a health rule's restart action, on a RUNNING application."""
    UPGRADE = "upgrade"
    """A graceful stop with an aligned snapshot (the rollback point) that ends STOPPED, for an
    upgrade to start the job's current spec after it (``services.upgrades``)."""


class DriverCall(StrEnum):
    """What the loop asks the launcher to do."""

    SUBMIT = "submit"
    STOP = "stop"
    ABORT = "abort"
    KILL = "kill"


class StandbyCall(StrEnum):
    """What the loop does about an application's standby driver (``supervisor.standbys``)."""

    LAUNCH = "launch"
    """Start a standby driver: the next attempt, held ready until promoted."""
    PROMOTE = "promote"
    """Make the standby the latest attempt: its queries start once the retry interval ends."""
    DISCARD = "discard"
    """End the standby (SIGKILL: it holds no data and has committed nothing)."""


@dataclass(frozen=True)
class Timing:
    """The supervisor's time limits, in seconds (from the server's settings)."""

    heartbeat_timeout: float = 120.0
    """A driver that reported once and then stays silent this long is taken as hung."""
    stop_timeout: float = 300.0
    """How long a graceful stop may take before the driver is aborted."""
    abort_grace: float = 15.0
    """How long after SIGTERM before SIGKILL."""
    restart_lead: float = 20.0
    """How long before a restart is due a pipeline's next driver may be submitted."""
    standby_retry: float = 10.0
    """How long after a standby driver ended before another is started (one that cannot
    start must not be retried every tick)."""


@dataclass(frozen=True)
class StandbyView:
    """The application's newest standby driver not promoted, as the loop found it."""

    attempt: int
    live: bool
    """Its process runs (it may still be starting)."""
    ready: bool = False
    """It said it is held ready (JVM, session and connectors loaded)."""
    ended_at: datetime | None = None


@dataclass(frozen=True)
class Observed:
    """One supervised application as the loop found it."""

    id: str
    version: int
    state: AppState
    policy: RestartPolicy
    suspend_on_failure: bool
    counters: RetryCounters
    submission_attempts: int
    execution_attempts: int
    restarts: int
    requested: Request | None = None
    requested_at: datetime | None = None
    next_attempt_at: datetime | None = None
    running_since: datetime | None = None
    attempt: int | None = None
    """Number of the latest attempt, if any."""
    attempt_live: bool = False
    """The latest attempt's driver process exists (or has not been seen to end)."""
    exit_code: int | None = None
    """How the latest attempt's driver ended, once it has."""
    launch_error: str | None = None
    """Why the latest attempt could not be started at all, if it could not."""
    attempt_judged: bool = False
    """The latest attempt's end was already judged (it belongs to an earlier start)."""
    driver_ready: bool = False
    """The latest attempt's driver reported, or its Spark UI answered (it may have ended since)."""
    last_heartbeat_at: datetime | None = None
    """The latest report from the latest attempt's driver, if it ever reported."""
    holds_queries: bool = False
    """The driver is a pipeline's runner, which can start and hold its queries until a time."""
    attempt_outcome: Outcome | None = None
    """How the latest attempt was judged to have ended, once it was."""
    failure_cause: str | None = None
    """What the latest attempt's driver logs say caused its failure, once it has failed."""
    takes_snapshots: bool = False
    """A pipeline that keeps a checkpoint: its graceful stops take an aligned snapshot."""
    wants_standby: bool = False
    """The job keeps a standby driver held ready while it runs (``spec.instance.standby``)."""
    standby: StandbyView | None = None
    """Its newest standby driver not promoted, if it has had one."""


@dataclass(frozen=True)
class Action:
    """One change to make: a state event, field changes, a call to the launcher, a note."""

    application_id: str
    version: int
    event: AppEvent | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)
    """Application fields to set (besides the state the event leads to)."""
    driver: DriverCall | None = None
    note: tuple[str, str] | None = None
    """(kind, message) for the application's events."""
    attempt_outcome: str | None = None
    """How the latest attempt ended, to record on it."""
    hold_until: datetime | None = None
    """For SUBMIT: the driver starts now but holds its queries until then."""
    wake_at: datetime | None = None
    """When the loop should tick again for this application (its next submission)."""
    snapshot: SnapshotRequest | None = None
    """For STOP: the aligned snapshot the runner takes before it exits."""
    standby: StandbyCall | None = None
    """What to do about the standby driver (``Observed.standby``'s attempt, or a new one)."""
