"""The supervisor's tick, called directly with hand-made observations and a fixed time."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from streamjobs.domain.manifest import RestartPolicy
from streamjobs.domain.policy import Outcome, RetryCounters
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.supervisor.reconcile import (
    Action,
    DriverCall,
    Observed,
    Request,
    Timing,
    tick,
)
from streamjobs.supervisor.submission_times import next_submission_due, submission_due

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TIMING = Timing(heartbeat_timeout=60, stop_timeout=30, abort_grace=10)


def seconds_ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def app(state: AppState = AppState.STARTING, **fields: Any) -> Observed:
    policy = fields.pop("policy", RestartPolicy())
    base = Observed(
        id="app-1",
        version=3,
        state=state,
        policy=policy if isinstance(policy, RestartPolicy) else RestartPolicy(**policy),
        suspend_on_failure=False,
        counters=RetryCounters(),
        submission_attempts=0,
        execution_attempts=0,
        restarts=0,
    )
    return replace(base, **fields)


def one(observed: Observed) -> Action:
    actions = tick([observed], now=NOW, timing=TIMING)
    assert len(actions) == 1, actions
    return actions[0]


def test_nothing_to_do_is_no_action() -> None:
    running = app(AppState.RUNNING, attempt=1, attempt_live=True, driver_ready=True)
    assert tick([running, app(AppState.SUSPENDED)], now=NOW, timing=TIMING) == []


class TestStarting:
    def test_a_new_application_submits_its_first_attempt(self) -> None:
        action = one(app())
        assert action.driver is DriverCall.SUBMIT
        assert action.event is None
        assert action.changes["submission_attempts"] == 1
        assert action.note == ("submitted", "attempt 1 submitted")
        assert action.version == 3

    def test_a_resumed_application_submits_the_next_attempt(self) -> None:
        action = one(app(attempt=2, attempt_judged=True, submission_attempts=2))
        assert action.driver is DriverCall.SUBMIT
        assert action.note == ("submitted", "attempt 3 submitted")

    def test_waits_while_the_driver_starts(self) -> None:
        assert tick([app(attempt=1, attempt_live=True)], now=NOW, timing=TIMING) == []

    def test_a_driver_that_reports_is_running(self) -> None:
        action = one(app(attempt=1, attempt_live=True, driver_ready=True, execution_attempts=1))
        assert action.event is AppEvent.DRIVER_RUNNING
        assert action.changes == {
            "running_since": NOW,
            "execution_attempts": 2,
            "next_attempt_at": None,
        }

    def test_a_submit_made_again_keeps_the_hold_of_the_one_that_did_not_land(self) -> None:
        due = NOW + timedelta(seconds=5)
        claimed = app(attempt=1, attempt_judged=True, next_attempt_at=due, submission_attempts=2)
        action = one(claimed)
        assert action.driver is DriverCall.SUBMIT
        assert (action.hold_until, action.changes["next_attempt_at"]) == (due, due)
        passed = one(replace(claimed, next_attempt_at=seconds_ago(1)))
        assert (passed.hold_until, passed.changes["next_attempt_at"]) == (None, None)

    def test_a_driver_that_exits_before_running_failed_to_start(self) -> None:
        policy = {"type": "OnFailure", "onSubmissionFailureRetries": 1}
        action = one(app(attempt=1, exit_code=1, policy=policy))
        assert action.event is AppEvent.RERUN_SCHEDULED
        assert action.changes["submission_failures"] == 1
        assert action.changes["next_attempt_at"] == NOW + timedelta(seconds=5)
        assert action.attempt_outcome == "submission_failed"
        assert "failed to start" in action.changes["error_message"]

    def test_a_driver_that_reported_then_exited_before_a_tick_failed_while_running(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 2, "onFailureRetryInterval": 4}
        action = one(app(attempt=1, exit_code=1, driver_ready=True, policy=policy))
        assert action.event is AppEvent.RERUN_SCHEDULED
        assert action.changes["execution_attempts"] == 1
        assert action.changes["execution_failures"] == 1
        assert action.changes["next_attempt_at"] == NOW + timedelta(seconds=4)
        assert action.attempt_outcome == "failed"

    def test_a_launch_that_failed_outright_counts_as_a_submission_failure(self) -> None:
        action = one(app(attempt=1, launch_error="no such file: /jobs/app.py"))
        assert action.event is AppEvent.FAILED
        assert action.note == (
            "failed",
            "submission failed before the driver started: no such file: /jobs/app.py; "
            "failed to start; no retries",
        )
        assert action.changes["error_message"] == "no such file: /jobs/app.py"

    def test_a_driver_that_failed_to_start_gives_the_cause_its_logs_name(self) -> None:
        policy = {"type": "OnFailure", "onSubmissionFailureRetries": 2}
        failed = app(attempt=1, exit_code=1, failure_cause="KeyError: 'x'", policy=policy)
        action = one(failed)
        assert action.event is AppEvent.RERUN_SCHEDULED
        assert action.changes["error_message"] == "KeyError: 'x'"
        assert action.note == (
            "restarting",
            "driver exited with code 1: KeyError: 'x'; failed to start; "
            "restarting in 5 s (retry 1 of 2)",
        )

    def test_without_a_cause_in_its_logs_the_exit_code_is_the_error(self) -> None:
        action = one(app(attempt=1, exit_code=3))
        assert action.changes["error_message"] == "the driver failed to start (exit code 3)"
        assert action.note == ("failed", "driver exited with code 3; failed to start; no retries")

    def test_a_cause_in_the_logs_is_preferred_to_the_launch_error(self) -> None:
        """A server that stopped while starting the driver: the next one found it had exited."""
        settled = app(
            attempt=1,
            exit_code=1,
            launch_error="the driver, started by a server that stopped, exited with code 1",
            failure_cause="ModuleNotFoundError: No module named 'requests'",
        )
        action = one(settled)
        assert action.changes["error_message"] == "ModuleNotFoundError: No module named 'requests'"
        assert action.note is not None
        assert action.note[1].startswith("driver exited with code 1: ModuleNotFoundError")

    def test_a_success_has_no_error_whatever_its_logs_say(self) -> None:
        action = one(app(attempt=1, exit_code=0, failure_cause="KeyError: 'x'"))
        assert action.event is AppEvent.FINISHED
        assert action.changes["error_message"] is None

    def test_a_very_short_finite_job_completes(self) -> None:
        assert one(app(attempt=1, exit_code=0)).event is AppEvent.FINISHED


class TestRunning:
    def running(self, **fields: Any) -> Observed:
        return app(
            AppState.RUNNING,
            attempt=1,
            running_since=seconds_ago(100),
            execution_attempts=1,
            submission_attempts=1,
            **fields,
        )

    def test_exit_0_completes_under_never(self) -> None:
        action = one(self.running(exit_code=0))
        assert action.event is AppEvent.FINISHED
        assert action.changes["error_message"] is None

    def test_a_failure_under_on_failure_restarts_after_the_interval(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 2, "onFailureRetryInterval": 9}
        action = one(self.running(exit_code=1, policy=policy))
        assert action.event is AppEvent.RERUN_SCHEDULED
        assert action.changes["next_attempt_at"] == NOW + timedelta(seconds=9)
        assert action.changes["execution_failures"] == 1
        assert action.note == (
            "restarting",
            "driver exited with code 1; failed; restarting in 9 s (retry 1 of 2)",
        )

    def test_spent_retries_fail(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 2}
        counters = RetryCounters(execution_failures=2)
        action = one(self.running(exit_code=1, policy=policy, counters=counters))
        assert action.event is AppEvent.FAILED
        assert action.changes["error_message"] == "the driver failed (exit code 1)"

    def test_a_failure_while_running_gives_the_cause_its_logs_name(self) -> None:
        cause = "AnalysisException: [PATH_NOT_FOUND] Path does not exist: file:/data/in."
        action = one(self.running(exit_code=1, failure_cause=cause))
        assert action.event is AppEvent.FAILED
        assert action.changes["error_message"] == cause
        assert action.note == ("failed", f"driver exited with code 1: {cause}; failed; no retries")

    def test_a_driver_whose_exit_code_is_lost_says_so(self) -> None:
        action = one(self.running(exit_code=None))
        assert action.note is not None
        assert action.note[1].startswith("the driver ended with an unknown exit code; failed")

    def test_always_restarts_a_failure_to_start_only_within_its_bound(self) -> None:
        policy = {"type": "Always", "onSubmissionFailureRetries": 1}
        first = one(app(attempt=1, exit_code=1, policy=policy))
        assert first.event is AppEvent.RERUN_SCHEDULED
        spent = RetryCounters(submission_failures=1)
        second = one(app(attempt=2, exit_code=1, policy=policy, counters=spent))
        assert second.event is AppEvent.FAILED
        assert second.note is not None
        assert second.note[1].endswith("failed to start; 1 retry spent")

    def test_repeated_failures_to_start_wait_longer_each_time(self) -> None:
        policy = {
            "type": "Always",
            "onSubmissionFailureRetries": 5,
            "onSubmissionFailureRetryInterval": 6,
        }
        waits = []
        for failures in range(4):
            counters = RetryCounters(submission_failures=failures)
            action = one(app(attempt=failures + 1, exit_code=1, policy=policy, counters=counters))
            waits.append(action.changes["next_attempt_at"] - NOW)
        assert waits == [timedelta(seconds=s) for s in (6, 12, 24, 48)]

    def test_spent_retries_suspend_when_the_job_says_so(self) -> None:
        action = one(self.running(exit_code=137, suspend_on_failure=True))
        assert action.event is AppEvent.SUSPENDED

    def test_a_long_healthy_run_resets_the_counters(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 1, "resetAfterSeconds": 60}
        counters = RetryCounters(execution_failures=1)
        action = one(self.running(exit_code=1, policy=policy, counters=counters))
        assert action.event is AppEvent.RERUN_SCHEDULED

    def test_a_killed_driver_under_always_restarts(self) -> None:
        policy = {"type": "Always", "onFailureRetryInterval": 1}
        action = one(self.running(exit_code=137, policy=policy))
        assert action.event is AppEvent.RERUN_SCHEDULED
        assert action.changes["next_attempt_at"] == NOW + timedelta(seconds=1)

    def test_a_pipeline_restart_wakes_the_loop_the_lead_before_it_is_due(self) -> None:
        policy = {"type": "Always", "onFailureRetryInterval": 30}
        held = one(self.running(exit_code=137, policy=policy, holds_queries=True))
        assert held.wake_at == NOW + timedelta(seconds=30 - TIMING.restart_lead)
        plain = one(self.running(exit_code=137, policy=policy))
        assert plain.wake_at == NOW + timedelta(seconds=30)

    def test_a_silent_driver_is_killed(self) -> None:
        action = one(self.running(attempt_live=True, last_heartbeat_at=seconds_ago(61)))
        assert action.driver is DriverCall.KILL
        assert action.event is None
        assert action.note is not None
        assert action.note[0] == "driver-silent"

    def test_a_driver_that_reports_is_left_alone(self) -> None:
        observed = self.running(attempt_live=True, last_heartbeat_at=seconds_ago(59))
        assert tick([observed], now=NOW, timing=TIMING) == []

    def test_a_driver_that_never_reports_is_not_taken_as_silent(self) -> None:
        assert tick([self.running(attempt_live=True)], now=NOW, timing=TIMING) == []


class TestPendingRerun:
    def test_waits_for_its_time(self) -> None:
        waiting = app(AppState.PENDING_RERUN, attempt=1, next_attempt_at=NOW + timedelta(seconds=1))
        assert tick([waiting], now=NOW, timing=TIMING) == []

    def test_starts_the_next_attempt_when_due(self) -> None:
        due = app(
            AppState.PENDING_RERUN,
            attempt=1,
            attempt_judged=True,
            next_attempt_at=NOW,
            submission_attempts=1,
            restarts=0,
        )
        action = one(due)
        assert action.event is AppEvent.RERUN_STARTED
        assert action.driver is DriverCall.SUBMIT
        assert action.changes["restarts"] == 1
        assert action.changes["submission_attempts"] == 2
        assert action.note == ("submitted", "attempt 2 submitted")
        assert action.hold_until is None

    def held(self, due_in: float, **fields: Any) -> Observed:
        """A pipeline whose attempt 1 ran and failed, its restart due in ``due_in`` seconds."""
        return app(
            AppState.PENDING_RERUN,
            **{
                "attempt": 1,
                "attempt_judged": True,
                "attempt_outcome": Outcome.FAILED,
                "holds_queries": True,
                "next_attempt_at": NOW + timedelta(seconds=due_in),
                **fields,
            },
        )

    def test_a_pipeline_is_submitted_the_lead_early_and_holds_its_queries(self) -> None:
        action = one(self.held(due_in=TIMING.restart_lead))
        due = NOW + timedelta(seconds=TIMING.restart_lead)
        assert action.driver is DriverCall.SUBMIT
        assert action.event is AppEvent.RERUN_STARTED
        assert action.hold_until == due
        assert action.note == (
            "submitted",
            "attempt 2 submitted; its queries start at 12:00:20 UTC, when the retry interval ends",
        )

    def test_not_sooner_than_the_lead(self) -> None:
        assert tick([self.held(due_in=TIMING.restart_lead + 1)], now=NOW, timing=TIMING) == []

    def test_a_restart_already_due_holds_nothing(self) -> None:
        assert one(self.held(due_in=0)).hold_until is None

    def test_after_a_failure_to_start_waits_the_whole_interval(self) -> None:
        failed_to_start = self.held(due_in=1, attempt_outcome=Outcome.SUBMISSION_FAILED)
        assert tick([failed_to_start], now=NOW, timing=TIMING) == []

    def test_a_driver_that_cannot_hold_its_queries_waits_the_whole_interval(self) -> None:
        assert tick([self.held(due_in=1, holds_queries=False)], now=NOW, timing=TIMING) == []

    def test_no_lead_when_the_lead_is_zero(self) -> None:
        without = replace(TIMING, restart_lead=0)
        assert tick([self.held(due_in=1)], now=NOW, timing=without) == []
        assert submission_due(self.held(due_in=1), without) == NOW + timedelta(seconds=1)


class TestTerminating:
    def terminating(self, request: Request, waited: float, **fields: Any) -> Observed:
        return app(
            AppState.TERMINATING,
            attempt=1,
            requested=request,
            requested_at=seconds_ago(waited),
            **fields,
        )

    def test_stop_asks_the_driver_to_stop(self) -> None:
        action = one(self.terminating(Request.STOP, 5, attempt_live=True))
        assert (action.driver, action.event) == (DriverCall.STOP, None)

    def test_a_stop_that_takes_too_long_becomes_an_abort_then_a_kill(self) -> None:
        assert one(self.terminating(Request.STOP, 31, attempt_live=True)).driver is (
            DriverCall.ABORT
        )
        assert one(self.terminating(Request.STOP, 41, attempt_live=True)).driver is (
            DriverCall.KILL
        )

    def test_abort_sends_sigterm_then_sigkill_after_the_grace(self) -> None:
        assert one(self.terminating(Request.ABORT, 0, attempt_live=True)).driver is (
            DriverCall.ABORT
        )
        assert one(self.terminating(Request.ABORT, 11, attempt_live=True)).driver is (
            DriverCall.KILL
        )

    def test_a_stopped_driver_is_stopped(self) -> None:
        action = one(self.terminating(Request.STOP, 5, exit_code=0))
        assert action.event is AppEvent.STOPPED
        assert action.attempt_outcome == "stopped"

    def test_a_driver_that_fails_while_stopping_failed(self) -> None:
        assert one(self.terminating(Request.STOP, 5, exit_code=1)).event is AppEvent.FAILED

    def test_an_aborted_driver_is_aborted_whatever_its_code(self) -> None:
        action = one(self.terminating(Request.ABORT, 5, exit_code=143))
        assert action.event is AppEvent.ABORTED
        assert action.changes["exit_code"] == 143

    def test_without_any_attempt_it_ends_at_once(self) -> None:
        observed = replace(self.terminating(Request.ABORT, 0), attempt=None)
        assert one(observed).event is AppEvent.ABORTED


def test_every_application_gets_its_actions() -> None:
    first, second = app(), replace(app(), id="app-2")
    assert [action.application_id for action in tick([first, second], now=NOW, timing=TIMING)] == [
        "app-1",
        "app-2",
    ]


def test_the_loop_wakes_for_the_earliest_submission_due() -> None:
    held = replace(
        app(AppState.PENDING_RERUN, attempt=1, attempt_outcome=Outcome.FAILED),
        holds_queries=True,
        next_attempt_at=NOW + timedelta(seconds=TIMING.restart_lead + 30),
    )
    waiting = next_submission_due([held], [], after=NOW, timing=TIMING)
    assert waiting == NOW + timedelta(seconds=30)
    due_now = Action("app-2", 1, wake_at=NOW)
    assert next_submission_due([held], [due_now], after=NOW, timing=TIMING) == NOW
    overdue = replace(held, next_attempt_at=NOW)  # submitted by this tick already
    assert next_submission_due([overdue], [], after=NOW, timing=TIMING) is None
