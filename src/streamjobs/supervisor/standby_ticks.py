"""The tick's decisions about an application's standby driver (``spec.instance.standby``).

Pure, like ``supervisor.reconcile``, which asks it:

- RUNNING, its driver ready, no request being carried out and no standby alive: start one,
  no sooner than ``Timing.standby_retry`` after the last one ended (one that cannot start is
  not retried every tick). The standby is the application's next attempt, held ready.
- PENDING_RERUN with a standby alive: promote it instead of submitting a new driver. Its runner
  holds the queries until the restart is due (``next_attempt_at``): the restart policy's
  interval is kept, only the cold start is saved.
- TERMINATING, or a job that no longer wants one (its spec changed on a resume): end it. It
  holds no data and has committed nothing, so it is killed rather than stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from streamjobs.domain.states import AppEvent, AppState
from streamjobs.supervisor.tick_model import Action, Observed, StandbyCall, StandbyView, Timing


def promotion(app: Observed, now: datetime) -> Action | None:
    """The promotion of the standby that replaces submitting the next attempt, when one is
    alive; None otherwise."""
    standby = app.standby
    if standby is None or not _alive(standby) or app.state is not AppState.PENDING_RERUN:
        return None
    due = app.next_attempt_at
    hold = due if due is not None and due > now else None
    note = f"attempt {standby.attempt} (the standby driver) promoted"
    note += f"; its queries start at {hold:%H:%M:%S} UTC" if hold else "; its queries start now"
    return Action(
        app.id,
        app.version,
        AppEvent.RERUN_STARTED,
        {
            "submission_attempts": app.submission_attempts + 1,
            "next_attempt_at": hold,
            "running_since": None,
            "exit_code": None,
            "restarts": app.restarts + 1,
        },
        note=("standby-promoted", note),
        hold_until=hold,
        standby=StandbyCall.PROMOTE,
    )


def upkeep(app: Observed, now: datetime, timing: Timing) -> Iterator[Action]:
    """Starting or ending the standby, beside whatever else the application needs."""
    standby = app.standby
    alive = standby is not None and _alive(standby)
    if alive and (app.state is AppState.TERMINATING or not app.wants_standby):
        yield Action(app.id, app.version, standby=StandbyCall.DISCARD)
    elif not alive and _wanted_now(app, now, timing):
        yield Action(app.id, app.version, standby=StandbyCall.LAUNCH)


def _wanted_now(app: Observed, now: datetime, timing: Timing) -> bool:
    running = app.state is AppState.RUNNING and app.attempt_live and app.driver_ready
    if not (app.wants_standby and running) or app.requested is not None:
        return False
    ended = app.standby.ended_at if app.standby is not None else None
    return ended is None or now >= ended + timedelta(seconds=timing.standby_retry)


def _alive(standby: StandbyView) -> bool:
    return standby.live and standby.ended_at is None
