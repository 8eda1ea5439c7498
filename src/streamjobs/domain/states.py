"""The application state machine: every state, the events that move it, and nothing else.

An application is one run of a job (DESIGN.md "Application states"). ``transition`` is the only
way a state changes; a pair (state, event) missing from the table is an ``IllegalTransition``,
so an abort of a finished application or a second start is refused, never silently applied.

Where DESIGN.md's diagram and the issue differ, the issue's words are followed:

- A failure whose retries are spent goes straight to SUSPENDED when ``suspendOnFailure`` is set
  (RUNNING/STARTING -> SUSPENDED), instead of passing through FAILED, so FAILED stays terminal.
- SUSPENDED is neither active nor terminal: it holds the job's one live application, keeps its
  checkpoint, and leaves by RESUME (a new attempt) or by ABORT/STOP.
- A submission failure with retries left waits in PENDING_RERUN, like a failure while running.
- A person's Suspend (SUSPEND_REQUESTED) stops the driver gracefully with an aligned snapshot
  (TERMINATING) and ends in SUSPENDED; one asked while a restart is pending suspends at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from streamjobs.domain.errors import Conflict


class AppState(StrEnum):
    """Where an application is in its life."""

    STARTING = "STARTING"
    """An attempt is being submitted; its driver has not reported running yet."""
    RUNNING = "RUNNING"
    PENDING_RERUN = "PENDING_RERUN"
    """The last attempt ended; the restart policy starts another after an interval."""
    TERMINATING = "TERMINATING"
    """Abort or Stop was asked; the driver is being stopped."""
    SUSPENDED = "SUSPENDED"
    """Failed with retries spent, checkpoint kept; Resume starts it again from there."""
    COMPLETED = "COMPLETED"
    """A finite trigger (Once, AvailableNow) finished."""
    FAILED = "FAILED"
    ABORTED = "ABORTED"
    STOPPED = "STOPPED"
    """Stopped gracefully: the micro-batch in flight was finished and committed."""


TERMINAL_STATES = frozenset(
    {AppState.COMPLETED, AppState.FAILED, AppState.ABORTED, AppState.STOPPED}
)
"""History: nothing changes a terminal application any more."""
ACTIVE_STATES = frozenset(
    {AppState.STARTING, AppState.RUNNING, AppState.PENDING_RERUN, AppState.TERMINATING}
)
"""The supervisor is working on these: a driver runs, starts, stops or is due to restart."""
PAUSED_STATES = frozenset({AppState.SUSPENDED})
"""Waiting for a person: not terminal (it is the job's live application), not supervised."""
LIVE_STATES = ACTIVE_STATES | PAUSED_STATES
"""A job has at most one application in these."""


class AppEvent(StrEnum):
    """What happens to an application."""

    DRIVER_RUNNING = "DRIVER_RUNNING"
    """The driver is up and reporting."""
    FINISHED = "FINISHED"
    """The driver exited 0 by itself (finite trigger)."""
    RERUN_SCHEDULED = "RERUN_SCHEDULED"
    """The attempt ended; the restart policy starts another."""
    RERUN_STARTED = "RERUN_STARTED"
    FAILED = "FAILED"
    """The attempt ended badly and the policy gives up."""
    SUSPENDED = "SUSPENDED"
    """The attempt ended badly, retries are spent, and the job suspends on failure."""
    RESUMED = "RESUMED"
    ABORT_REQUESTED = "ABORT_REQUESTED"
    STOP_REQUESTED = "STOP_REQUESTED"
    SUSPEND_REQUESTED = "SUSPEND_REQUESTED"
    """A person asked to suspend: stop gracefully with an aligned snapshot, then wait."""
    ABORTED = "ABORTED"
    """The driver is gone after an abort (or there was none to stop)."""
    STOPPED = "STOPPED"
    """The driver finished its micro-batch and exited after a stop (or there was none)."""


_S, _E = AppState, AppEvent
TRANSITIONS: Mapping[tuple[AppState, AppEvent], AppState] = MappingProxyType(
    {
        (_S.STARTING, _E.DRIVER_RUNNING): _S.RUNNING,
        (_S.STARTING, _E.FINISHED): _S.COMPLETED,
        (_S.STARTING, _E.RERUN_SCHEDULED): _S.PENDING_RERUN,
        (_S.STARTING, _E.FAILED): _S.FAILED,
        (_S.STARTING, _E.SUSPENDED): _S.SUSPENDED,
        (_S.STARTING, _E.ABORT_REQUESTED): _S.TERMINATING,
        (_S.STARTING, _E.STOP_REQUESTED): _S.TERMINATING,
        (_S.STARTING, _E.SUSPEND_REQUESTED): _S.TERMINATING,
        (_S.RUNNING, _E.FINISHED): _S.COMPLETED,
        (_S.RUNNING, _E.RERUN_SCHEDULED): _S.PENDING_RERUN,
        (_S.RUNNING, _E.FAILED): _S.FAILED,
        (_S.RUNNING, _E.SUSPENDED): _S.SUSPENDED,
        (_S.RUNNING, _E.ABORT_REQUESTED): _S.TERMINATING,
        (_S.RUNNING, _E.STOP_REQUESTED): _S.TERMINATING,
        (_S.RUNNING, _E.SUSPEND_REQUESTED): _S.TERMINATING,
        (_S.PENDING_RERUN, _E.RERUN_STARTED): _S.STARTING,
        (_S.PENDING_RERUN, _E.ABORT_REQUESTED): _S.ABORTED,
        (_S.PENDING_RERUN, _E.STOP_REQUESTED): _S.STOPPED,
        (_S.PENDING_RERUN, _E.SUSPEND_REQUESTED): _S.SUSPENDED,
        (_S.TERMINATING, _E.ABORTED): _S.ABORTED,
        (_S.TERMINATING, _E.STOPPED): _S.STOPPED,
        (_S.TERMINATING, _E.FAILED): _S.FAILED,
        (_S.TERMINATING, _E.SUSPENDED): _S.SUSPENDED,
        (_S.SUSPENDED, _E.RESUMED): _S.STARTING,
        (_S.SUSPENDED, _E.ABORT_REQUESTED): _S.ABORTED,
        (_S.SUSPENDED, _E.STOP_REQUESTED): _S.STOPPED,
    }
)
"""Every allowed (state, event) and the state it leads to."""


class IllegalTransition(Conflict):
    """An event that cannot happen to an application in its current state (HTTP 409)."""

    def __init__(self, state: AppState, event: AppEvent, *, application: str = "") -> None:
        self.state = state
        self.event = event
        subject = f"application {application}" if application else "an application"
        super().__init__(f"{subject} in state {state} cannot take {_describe(event)}")


def transition(state: AppState, event: AppEvent, *, application: str = "") -> AppState:
    """The state ``event`` moves an application in ``state`` to; ``IllegalTransition`` if none."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(state, event, application=application) from None


def allows(state: AppState, event: AppEvent) -> bool:
    """Whether an application in ``state`` can take ``event``."""
    return (state, event) in TRANSITIONS


def _describe(event: AppEvent) -> str:
    requests = {
        AppEvent.ABORT_REQUESTED: "an abort (it has already ended)",
        AppEvent.STOP_REQUESTED: "a stop (it has already ended)",
        AppEvent.SUSPEND_REQUESTED: "a suspend (only a starting, running or pending application "
        "suspends)",
        AppEvent.RESUMED: "a resume (only a suspended application resumes)",
    }
    return requests.get(event, f"event {event}")


def label(state: AppState | str) -> str:
    """The state's API value title-cased, the one name UI and CLI show: ``Pending Rerun``."""
    return str(state).replace("_", " ").title()
