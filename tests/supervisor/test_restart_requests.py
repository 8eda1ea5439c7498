"""A health rule's RESTART request in the supervisor's tick: the driver is ended, then the next
attempt starts at once, counted as a restart whatever the restart policy says."""

from __future__ import annotations

from typing import Any

from streamjobs.domain.policy import RetryCounters
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.supervisor.reconcile import DriverCall, Observed, Request, tick
from streamjobs.supervisor.submission_times import submission_due
from tests.supervisor.test_reconcile import NOW, TIMING, app, one, seconds_ago


def restart_requested(**fields: Any) -> Observed:
    defaults: dict[str, Any] = {
        "attempt": 1,
        "attempt_live": True,
        "driver_ready": True,
        "running_since": seconds_ago(300),
        "requested": Request.RESTART,
        "requested_at": seconds_ago(1),
    }
    return app(AppState.RUNNING, **(defaults | fields))


def test_a_restart_request_aborts_the_live_driver() -> None:
    action = one(restart_requested())
    assert action.driver is DriverCall.ABORT
    assert action.event is None
    assert action.changes == {}


def test_a_driver_that_ignores_the_abort_is_killed_after_the_grace() -> None:
    action = one(restart_requested(requested_at=seconds_ago(TIMING.abort_grace + 1)))
    assert action.driver is DriverCall.KILL


def test_once_the_driver_is_gone_the_next_attempt_is_due_now_whatever_the_policy() -> None:
    # the default policy is Never: an exit would be a failure, a requested restart is not
    ended = restart_requested(attempt_live=False, exit_code=143, counters=RetryCounters(0, 2))
    action = one(ended)
    assert action.event is AppEvent.RERUN_SCHEDULED
    assert action.driver is None
    assert action.changes == {
        "exit_code": 143,
        "running_since": None,
        "next_attempt_at": NOW,
        "requested": None,
        "requested_at": None,
        "requested_by": None,
    }
    assert action.attempt_outcome == "restarted"
    assert action.wake_at == NOW
    assert action.note is not None
    assert action.note[0] == "restarting"


def test_the_next_attempt_is_submitted_at_once_and_counted_as_a_restart() -> None:
    pending = app(
        AppState.PENDING_RERUN,
        attempt=1,
        attempt_judged=True,
        next_attempt_at=NOW,
        restarts=2,
        submission_attempts=1,
        holds_queries=True,
    )
    assert submission_due(pending, TIMING) == NOW
    action = one(pending)
    assert action.event is AppEvent.RERUN_STARTED
    assert action.driver is DriverCall.SUBMIT
    assert action.changes["restarts"] == 3
    assert action.hold_until is None


def test_only_a_running_application_restarts() -> None:
    starting = app(AppState.STARTING, attempt=1, attempt_live=True, requested=Request.RESTART)
    assert tick([starting], now=NOW, timing=TIMING) == []
