"""When the supervisor submits an application's next attempt, and when its loop wakes for one.

A PENDING_RERUN application's next attempt is due at its ``next_attempt_at``. A pipeline whose
driver holds its queries until then, restarted after an attempt that ran, is submitted up to
``Timing.restart_lead`` earlier (see ``supervisor.reconcile``); the loop sleeps until the earliest
such time of all the applications it watches. Pure: no store, no processes, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from streamjobs.domain.policy import Outcome
from streamjobs.domain.states import AppState

if TYPE_CHECKING:
    from streamjobs.supervisor.reconcile import Action, Observed, Timing


def submission_due(app: Observed, timing: Timing) -> datetime | None:
    """When a PENDING_RERUN application's next attempt is to be submitted (None: at once).

    ``restart_lead`` before it is due when the driver can hold its queries and the last
    attempt ran: one that failed to start may fail as fast again, and its retry interval is
    the only pause between such attempts.
    """
    if app.next_attempt_at is None:
        return None
    return submission_time(app.next_attempt_at, app.holds_queries, app.attempt_outcome, timing)


def next_submission_due(
    observed: Sequence[Observed], actions: Sequence[Action], *, after: datetime, timing: Timing
) -> datetime | None:
    """The earliest time an application's next attempt is to be submitted, if any is: after
    ``after`` for those waiting already (the due ones were submitted by this tick), and
    whenever it is for those this tick scheduled (at once, when already due)."""
    waiting = [
        submission_due(app, timing) for app in observed if app.state is AppState.PENDING_RERUN
    ]
    due = [at for at in waiting if at is not None and at > after]
    due += [action.wake_at for action in actions if action.wake_at is not None]
    return min(due, default=None)


def submission_time(
    due: datetime, holds_queries: bool, outcome: Outcome | None, timing: Timing
) -> datetime:
    """When an attempt due at ``due`` is submitted: ``restart_lead`` earlier when its driver
    ``holds_queries`` and the attempt before it ran (its ``outcome``), else when it is due."""
    ran = outcome in (Outcome.FAILED, Outcome.SUCCEEDED)
    return due - timedelta(seconds=timing.restart_lead) if holds_queries and ran else due
