"""The supervisor's tick: what to do about each supervised application, given what was observed.

``tick(observed, now=..., timing=...)`` is pure: no store, no processes, no clock. The loop
(``supervisor.loop``) gathers an ``Observed`` per application (its row, its latest attempt, the
driver's health as the launcher reports it), calls the tick, and applies the ``Action``s it
returns. Tests call the tick directly with hand-made observations and a fake time.

Per state:

- STARTING: submit an attempt when none is live; once the driver reports (or its UI answers)
  it is RUNNING; a driver that exits first failed to start (or finished, with exit code 0).
- RUNNING: a driver that exited is judged by the restart policy (``domain.policy``); one that
  stopped sending heartbeats for ``heartbeat_timeout`` is killed, and judged when it is gone.
  A RESTART request (a health rule's ``restart`` action) aborts the driver (SIGKILL after
  ``abort_grace``) and, once it is gone, starts the next attempt at once from the checkpoint,
  counted as a restart whatever the restart policy says.
- PENDING_RERUN: the next attempt starts when its time has come. A pipeline restarted after an
  attempt that ran is submitted up to ``restart_lead`` earlier, and its runner holds the queries
  until the time has come: the driver's JVM and Spark session start during the retry interval
  rather than after it, and nothing reads or writes data sooner than the policy allows.
- TERMINATING: stop or abort the driver, escalating to SIGTERM after ``stop_timeout`` and to
  SIGKILL after ``abort_grace``; once it is gone, STOPPED or ABORTED. A person's SUSPEND stops
  the driver as STOP does and ends in SUSPENDED (whatever its exit code). A graceful stop of an
  application that takes snapshots asks its runner for an aligned snapshot (kind stop,
  suspend or upgrade, named after the time it was asked for). An UPGRADE stops as STOP does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from streamjobs.domain.policy import Decision, Outcome, decide
from streamjobs.domain.snapshots import SnapshotKind, SnapshotRequest, automatic_name
from streamjobs.domain.states import AppEvent, AppState, transition
from streamjobs.supervisor import standby_ticks
from streamjobs.supervisor.submission_times import submission_due, submission_time
from streamjobs.supervisor.tick_model import (
    Action,
    DriverCall,
    Observed,
    Request,
    StandbyView,
    Timing,
)

__all__ = ["Action", "DriverCall", "Observed", "Request", "StandbyView", "Timing", "tick"]


def tick(observed: Sequence[Observed], *, now: datetime, timing: Timing) -> list[Action]:
    """Every action the supervised applications need at ``now``."""
    return [action for app in observed for action in _actions_for(app, now, timing)]


def _actions_for(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    yield from _state_actions(app, now, timing)
    yield from standby_ticks.upkeep(app, now, timing)


def _state_actions(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    if app.state is AppState.STARTING:
        yield from _starting(app, now, timing)
    elif app.state is AppState.RUNNING:
        yield from _running(app, now, timing)
    elif app.state is AppState.PENDING_RERUN:
        promoted = standby_ticks.promotion(app, now)
        due = submission_due(app, timing)
        if promoted is not None:
            yield promoted
        elif due is None or due <= now:
            yield _submit(app, AppEvent.RERUN_STARTED, now, restarts=app.restarts + 1)
    elif app.state is AppState.TERMINATING:
        yield from _terminating(app, now, timing)


def _starting(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    if app.attempt is None or app.attempt_judged:
        yield _submit(app, None, now)
    elif app.attempt_live and app.driver_ready:
        yield Action(
            app.id,
            app.version,
            AppEvent.DRIVER_RUNNING,
            {
                "running_since": now,
                "execution_attempts": app.execution_attempts + 1,
                "next_attempt_at": None,
            },
            note=("driver-running", f"attempt {app.attempt}: the driver is running"),
        )
    elif not app.attempt_live and app.driver_ready:
        # It reported, so it ran, and ended before a tick saw it running.
        outcome = Outcome.SUCCEEDED if app.exit_code == 0 else Outcome.FAILED
        ran = {"execution_attempts": app.execution_attempts + 1}
        yield _judged(app, outcome, now, timing, healthy_seconds=0, **ran)
    elif not app.attempt_live:
        succeeded = app.exit_code == 0
        outcome = Outcome.SUCCEEDED if succeeded else Outcome.SUBMISSION_FAILED
        yield _judged(app, outcome, now, timing, healthy_seconds=0)


def _running(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    if app.requested is Request.RESTART:
        yield _restarting(app, now, timing)
    elif not app.attempt_live:
        outcome = Outcome.SUCCEEDED if app.exit_code == 0 else Outcome.FAILED
        healthy = (now - app.running_since).total_seconds() if app.running_since else 0.0
        yield _judged(app, outcome, now, timing, healthy_seconds=healthy)
    elif _silent(app, now, timing):
        yield Action(
            app.id,
            app.version,
            driver=DriverCall.KILL,
            note=(
                "driver-silent",
                f"attempt {app.attempt}: no report for {timing.heartbeat_timeout:g} s; "
                "killing the driver",
            ),
        )


def _restarting(app: Observed, now: datetime, timing: Timing) -> Action:
    """Carry out a RESTART request: end the driver, then schedule the next attempt for now."""
    if app.attempt_live:
        waited = (now - app.requested_at).total_seconds() if app.requested_at else 0.0
        call = DriverCall.ABORT if waited < timing.abort_grace else DriverCall.KILL
        return Action(app.id, app.version, driver=call)
    return Action(
        app.id,
        app.version,
        AppEvent.RERUN_SCHEDULED,
        {
            "exit_code": app.exit_code,
            "running_since": None,
            "next_attempt_at": now,
            "requested": None,
            "requested_at": None,
            "requested_by": None,
        },
        note=(
            "restarting",
            f"attempt {app.attempt} ended for a restart a health rule asked for; "
            "the next attempt starts now from the checkpoint",
        ),
        attempt_outcome="restarted",
        wake_at=now,
    )


_GRACEFUL = {
    Request.STOP: SnapshotKind.STOP,
    Request.SUSPEND: SnapshotKind.SUSPEND,
    Request.UPGRADE: SnapshotKind.UPGRADE,
}
"""The requests that stop the driver gracefully, and the kind of their aligned snapshot."""
_STOPS = frozenset({Request.STOP, Request.UPGRADE})
"""The graceful stops that end STOPPED (FAILED when the driver exits badly)."""


def _terminating(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    if not app.attempt_live:
        yield _terminated(app)
        return
    waited = (now - app.requested_at).total_seconds() if app.requested_at else 0.0
    graceful = app.requested in _GRACEFUL
    if graceful and waited < timing.stop_timeout:
        snapshot = _aligned_snapshot(app, now)
        yield Action(app.id, app.version, driver=DriverCall.STOP, snapshot=snapshot)
        return
    since_abort = waited - (timing.stop_timeout if graceful else 0.0)
    call = DriverCall.ABORT if since_abort < timing.abort_grace else DriverCall.KILL
    yield Action(app.id, app.version, driver=call)


def _aligned_snapshot(app: Observed, now: datetime) -> SnapshotRequest | None:
    """The snapshot a graceful stop asks the runner for: named after when the stop was asked,
    so every tick asks for the same one."""
    kind = _GRACEFUL.get(app.requested) if app.requested else None
    if kind is None or not app.takes_snapshots:
        return None
    return SnapshotRequest(name=automatic_name(kind, app.requested_at or now), kind=kind)


def _terminated(app: Observed) -> Action:
    failed_code = app.exit_code not in (0, None)
    if app.requested is Request.SUSPEND and failed_code:
        event = AppEvent.SUSPENDED
        kind = f"suspended; the driver exited with code {app.exit_code} while stopping"
    elif app.requested is Request.SUSPEND:
        event, kind = AppEvent.SUSPENDED, "suspended after the micro-batch in flight"
    elif app.requested in _STOPS and failed_code:
        event, kind = AppEvent.FAILED, f"the driver exited with code {app.exit_code} while stopping"
    elif app.requested in _STOPS:
        event, kind = AppEvent.STOPPED, "stopped after the micro-batch in flight"
    else:
        event, kind = AppEvent.ABORTED, "aborted"
    return Action(
        app.id,
        app.version,
        event,
        {"exit_code": app.exit_code, "next_attempt_at": None},
        note=(str(transition(AppState.TERMINATING, event)).lower(), kind),
        attempt_outcome=str(event).lower(),
    )


def _submit(app: Observed, event: AppEvent | None, now: datetime, **changes: Any) -> Action:
    """Submit the next attempt; while its restart is not yet due (submitted the lead early, or
    again after a submit that did not land) its driver holds the queries until then, and
    ``next_attempt_at`` keeps that time until the driver runs."""
    number = (app.attempt or 0) + 1
    due = app.next_attempt_at
    hold = due if due is not None and due > now else None
    note = f"attempt {number} submitted"
    if hold is not None:
        note += f"; its queries start at {hold:%H:%M:%S} UTC, when the retry interval ends"
    return Action(
        app.id,
        app.version,
        event,
        {
            "submission_attempts": app.submission_attempts + 1,
            "next_attempt_at": hold,
            "running_since": None,
            "exit_code": None,
            **changes,
        },
        driver=DriverCall.SUBMIT,
        note=("submitted", note),
        hold_until=hold,
    )


def _judged(
    app: Observed,
    outcome: Outcome,
    now: datetime,
    timing: Timing,
    *,
    healthy_seconds: float,
    **more: Any,
) -> Action:
    decision = decide(
        app.policy,
        outcome=outcome,
        counters=app.counters,
        healthy_seconds=healthy_seconds,
        suspend_on_failure=app.suspend_on_failure,
    )
    changes: dict[str, Any] = {
        "exit_code": app.exit_code,
        "submission_failures": decision.counters.submission_failures,
        "execution_failures": decision.counters.execution_failures,
        "running_since": None,
        "next_attempt_at": None,
        "error_message": _error_for(app, outcome),
        **more,
    }
    wake_at = None
    if decision.event is AppEvent.RERUN_SCHEDULED:
        due = now + timedelta(seconds=decision.delay_seconds)
        changes["next_attempt_at"] = due
        wake_at = submission_time(due, app.holds_queries, outcome, timing)
    return Action(
        app.id,
        app.version,
        decision.event,
        changes,
        note=(_note_kind(decision), f"{_ending(app)}; {decision.reason}"),
        attempt_outcome=str(outcome).lower(),
        wake_at=wake_at,
    )


def _error_for(app: Observed, outcome: Outcome) -> str | None:
    """The application's ``error``: the cause its driver's logs give, else why its driver could
    not be started, else how it ended."""
    if outcome is Outcome.SUCCEEDED:
        return None
    if app.failure_cause:
        return app.failure_cause
    if app.launch_error:
        return app.launch_error
    code = "unknown" if app.exit_code is None else str(app.exit_code)
    if outcome is Outcome.SUBMISSION_FAILED:
        return f"the driver failed to start (exit code {code})"
    return f"the driver failed (exit code {code})"


def _ending(app: Observed) -> str:
    """How the latest attempt ended, for the events: a submission that never started a driver
    says so (and why), a driver says its exit code and the cause its logs give."""
    if app.launch_error and app.exit_code is None:
        return f"submission failed before the driver started: {app.launch_error}"
    if app.exit_code is None:
        ended = "the driver ended with an unknown exit code"
    else:
        ended = f"driver exited with code {app.exit_code}"
    return f"{ended}: {app.failure_cause}" if app.failure_cause else ended


def _note_kind(decision: Decision) -> str:
    return {
        AppEvent.RERUN_SCHEDULED: "restarting",
        AppEvent.FINISHED: "completed",
        AppEvent.FAILED: "failed",
        AppEvent.SUSPENDED: "suspended",
    }[decision.event]


def _silent(app: Observed, now: datetime, timing: Timing) -> bool:
    if app.last_heartbeat_at is None:
        return False
    return (now - app.last_heartbeat_at).total_seconds() > timing.heartbeat_timeout
