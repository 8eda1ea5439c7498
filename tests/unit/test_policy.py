"""Restart decisions for every policy path: counts, intervals, backoff, reset and suspend."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.manifest import RestartPolicy
from streamjobs.domain.policy import Decision, Outcome, RetryCounters, decide, retry_interval
from streamjobs.domain.states import AppEvent

NONE = RetryCounters()


def policy(**fields: Any) -> RestartPolicy:
    return RestartPolicy.model_validate(fields)


def run_out(p: RestartPolicy, outcome: Outcome, **kwargs: Any) -> list[Decision]:
    """Decisions for consecutive failures until the policy stops restarting."""
    decisions, counters = [], NONE
    while len(decisions) < 50:
        decision = decide(p, outcome=outcome, counters=counters, **kwargs)
        decisions.append(decision)
        if decision.event is not AppEvent.RERUN_SCHEDULED:
            break
        counters = decision.counters
    return decisions


class TestNever:
    def test_success_completes(self) -> None:
        decision = decide(policy(type="Never"), outcome=Outcome.SUCCEEDED, counters=NONE)
        assert decision.event is AppEvent.FINISHED

    @pytest.mark.parametrize("outcome", [Outcome.FAILED, Outcome.SUBMISSION_FAILED])
    def test_failure_fails_at_once(self, outcome: Outcome) -> None:
        decision = decide(policy(type="Never"), outcome=outcome, counters=NONE)
        assert decision.event is AppEvent.FAILED
        assert "no retries" in decision.reason

    def test_failure_suspends_when_asked(self) -> None:
        decision = decide(
            policy(type="Never"),
            outcome=Outcome.FAILED,
            counters=NONE,
            suspend_on_failure=True,
        )
        assert decision.event is AppEvent.SUSPENDED


class TestOnFailure:
    def test_failures_while_running_are_retried_on_failure_retries_times(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=2, onFailureRetryInterval=7)
        decisions = run_out(p, Outcome.FAILED)
        assert [d.event for d in decisions] == [
            AppEvent.RERUN_SCHEDULED,
            AppEvent.RERUN_SCHEDULED,
            AppEvent.FAILED,
        ]
        assert [d.delay_seconds for d in decisions[:2]] == [7, 7]
        assert decisions[1].reason == "failed; restarting in 7 s (retry 2 of 2)"
        assert decisions[-1].reason == "failed; 2 retries spent"
        assert decisions[-1].counters == RetryCounters(execution_failures=3)

    def test_submission_failures_have_their_own_retries_and_interval(self) -> None:
        p = policy(
            type="OnFailure",
            onSubmissionFailureRetries=3,
            onSubmissionFailureRetryInterval=2,
            onFailureRetries=0,
        )
        decisions = run_out(p, Outcome.SUBMISSION_FAILED)
        assert len(decisions) == 4
        assert [d.delay_seconds for d in decisions[:3]] == [2, 4, 8]
        assert decisions[-1].event is AppEvent.FAILED
        assert decisions[-1].counters == RetryCounters(submission_failures=4)

    def test_the_two_counters_are_apart(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=1, onSubmissionFailureRetries=1)
        counters = RetryCounters(submission_failures=1)
        decision = decide(p, outcome=Outcome.FAILED, counters=counters)
        assert decision.event is AppEvent.RERUN_SCHEDULED
        assert decision.counters == RetryCounters(submission_failures=1, execution_failures=1)

    def test_zero_retries_fail_at_once(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=0)
        assert decide(p, outcome=Outcome.FAILED, counters=NONE).event is AppEvent.FAILED

    def test_success_completes(self) -> None:
        p = policy(type="OnFailure")
        decision = decide(p, outcome=Outcome.SUCCEEDED, counters=RetryCounters(1, 1))
        assert decision.event is AppEvent.FINISHED

    def test_spent_retries_suspend_when_asked(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=1)
        decisions = run_out(p, Outcome.FAILED, suspend_on_failure=True)
        assert [d.event for d in decisions] == [AppEvent.RERUN_SCHEDULED, AppEvent.SUSPENDED]
        assert decisions[-1].reason == "failed; 1 retry spent; suspended"


class TestAlways:
    def test_success_restarts_too(self) -> None:
        p = policy(type="Always", onFailureRetryInterval=3)
        decision = decide(p, outcome=Outcome.SUCCEEDED, counters=RetryCounters(0, 4))
        assert (decision.event, decision.delay_seconds) == (AppEvent.RERUN_SCHEDULED, 3)
        assert decision.counters == NONE

    def test_failures_while_running_restart_without_limit(self) -> None:
        p = policy(type="Always", onFailureRetries=1, onSubmissionFailureRetries=1)
        decisions = run_out(p, Outcome.FAILED)
        assert len(decisions) == 50
        assert {d.event for d in decisions} == {AppEvent.RERUN_SCHEDULED}
        assert decisions[1].reason == "failed; restarting in 5 s (retry 2)"

    def test_failures_to_start_are_bounded_as_under_on_failure(self) -> None:
        p = policy(type="Always", onSubmissionFailureRetries=2, onSubmissionFailureRetryInterval=3)
        decisions = run_out(p, Outcome.SUBMISSION_FAILED)
        assert [d.event for d in decisions] == [
            AppEvent.RERUN_SCHEDULED,
            AppEvent.RERUN_SCHEDULED,
            AppEvent.FAILED,
        ]
        assert decisions[1].reason == "failed to start; restarting in 6 s (retry 2 of 2)"
        assert decisions[-1].reason == "failed to start; 2 retries spent"

    def test_the_default_bound_is_one_retry(self) -> None:
        decisions = run_out(policy(type="Always"), Outcome.SUBMISSION_FAILED)
        assert [d.event for d in decisions] == [AppEvent.RERUN_SCHEDULED, AppEvent.FAILED]
        assert decisions[-1].reason == "failed to start; 1 retry spent"

    def test_failures_to_start_suspend_when_asked(self) -> None:
        p = policy(type="Always", onSubmissionFailureRetries=0)
        decision = decide(
            p, outcome=Outcome.SUBMISSION_FAILED, counters=NONE, suspend_on_failure=True
        )
        assert decision.event is AppEvent.SUSPENDED

    def test_a_run_between_failures_to_start_does_not_clear_their_count(self) -> None:
        p = policy(type="Always", onSubmissionFailureRetries=1)
        counters = RetryCounters(submission_failures=1, execution_failures=3)
        decision = decide(p, outcome=Outcome.SUBMISSION_FAILED, counters=counters)
        assert decision.event is AppEvent.FAILED

    def test_submission_failures_wait_their_own_interval(self) -> None:
        p = policy(type="Always", onSubmissionFailureRetryInterval=9, onFailureRetryInterval=1)
        decision = decide(p, outcome=Outcome.SUBMISSION_FAILED, counters=NONE)
        assert decision.delay_seconds == 9


class TestBackoff:
    def test_exponential_doubles_up_to_the_maximum(self) -> None:
        p = policy(
            type="OnFailure",
            onFailureRetries=6,
            onFailureRetryInterval=5,
            backoff="exponential",
            maxInterval=60,
        )
        delays = [d.delay_seconds for d in run_out(p, Outcome.FAILED)[:-1]]
        assert delays == [5, 10, 20, 40, 60, 60]

    @pytest.mark.parametrize("kind", ["OnFailure", "Always"])
    def test_failures_to_start_double_even_with_fixed_backoff(self, kind: str) -> None:
        p = policy(
            type=kind,
            backoff="fixed",
            onSubmissionFailureRetries=7,
            onSubmissionFailureRetryInterval=5,
            maxInterval=120,
        )
        delays = [d.delay_seconds for d in run_out(p, Outcome.SUBMISSION_FAILED)[:-1]]
        assert delays == [5, 10, 20, 40, 80, 120, 120]

    def test_failures_while_running_keep_a_fixed_backoff(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=3, onFailureRetryInterval=5)
        assert [d.delay_seconds for d in run_out(p, Outcome.FAILED)[:-1]] == [5, 5, 5]

    def test_fixed_is_the_default(self) -> None:
        assert retry_interval(policy(), 5, 10) == 5

    def test_a_maximum_below_the_interval_keeps_the_interval(self) -> None:
        p = policy(backoff="exponential", maxInterval=1)
        assert retry_interval(p, 5, 3) == 5

    def test_huge_failure_counts_do_not_overflow(self) -> None:
        p = policy(backoff="exponential", maxInterval=600)
        assert retry_interval(p, 5, 10_000) == 600


class TestReset:
    def test_a_long_healthy_run_resets_the_counters(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=1, resetAfterSeconds=3600)
        spent = RetryCounters(execution_failures=1)
        assert decide(p, outcome=Outcome.FAILED, counters=spent).event is AppEvent.FAILED
        after_a_week = decide(p, outcome=Outcome.FAILED, counters=spent, healthy_seconds=604800)
        assert after_a_week.event is AppEvent.RERUN_SCHEDULED
        assert after_a_week.counters == RetryCounters(execution_failures=1)

    def test_a_short_run_does_not_reset(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=1, resetAfterSeconds=3600)
        spent = RetryCounters(execution_failures=1)
        decision = decide(p, outcome=Outcome.FAILED, counters=spent, healthy_seconds=3599)
        assert decision.event is AppEvent.FAILED

    def test_backoff_starts_again_after_a_reset(self) -> None:
        p = policy(
            type="Always", backoff="exponential", onFailureRetryInterval=2, resetAfterSeconds=10
        )
        counters = RetryCounters(execution_failures=5)
        assert decide(p, outcome=Outcome.FAILED, counters=counters).delay_seconds == 64
        reset = decide(p, outcome=Outcome.FAILED, counters=counters, healthy_seconds=11)
        assert reset.delay_seconds == 2

    def test_without_reset_after_seconds_nothing_resets(self) -> None:
        p = policy(type="OnFailure", onFailureRetries=1)
        spent = RetryCounters(execution_failures=1)
        decision = decide(p, outcome=Outcome.FAILED, counters=spent, healthy_seconds=10**9)
        assert decision.event is AppEvent.FAILED


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("backoff", "linear", "Input should be 'fixed' or 'exponential'"),
        ("maxInterval", 0, "greater than or equal to 1"),
        ("resetAfterSeconds", 0, "greater than or equal to 1"),
    ],
)
def test_bad_policy_fields_are_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        policy(**{field: value})
