"""Restart decisions: what happens to an application when one of its attempts ends.

A pure function of the job's restart policy, how the attempt ended, and the retry counters the
application carries. The supervisor calls it and applies the result; tests call it directly.

The counters count consecutive failures of each kind since the last reset. A failure to start
(``SUBMISSION_FAILED``: the driver never reported running) and a failure while running
(``FAILED``) have their own retries and intervals, as in the manifest. With ``resetAfterSeconds``
an attempt that ran healthy that long clears both counters before its own end is counted, so a
stream that fails once a week is retried every time.

``Always`` restarts whatever way an attempt ended, except that failures to start are bounded by
``onSubmissionFailureRetries`` as under ``OnFailure``: a job that cannot start (a missing jar, a
bad argument) fails the same way every time, and retrying it forever only fills the events.
Consecutive failures to start also wait twice as long each time (up to ``maxInterval``), whatever
``backoff`` says; ``backoff`` is how failures while running wait.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from streamjobs.domain.manifest import Backoff, RestartPolicy, RestartPolicyType
from streamjobs.domain.states import AppEvent


class Outcome(StrEnum):
    """How an attempt ended."""

    SUCCEEDED = "SUCCEEDED"
    """The driver exited 0 by itself."""
    SUBMISSION_FAILED = "SUBMISSION_FAILED"
    """The driver never reached running: spark-submit failed, or it exited before reporting."""
    FAILED = "FAILED"
    """The driver ran, then exited non-zero, was killed, or stopped reporting."""


@dataclass(frozen=True)
class RetryCounters:
    """Consecutive failures of each kind since the last reset."""

    submission_failures: int = 0
    execution_failures: int = 0


@dataclass(frozen=True)
class Decision:
    """What to do with the application: its next event, when to restart, the new counters."""

    event: AppEvent
    """FINISHED, RERUN_SCHEDULED, FAILED or SUSPENDED."""
    counters: RetryCounters
    delay_seconds: int = 0
    """For RERUN_SCHEDULED: how long to wait before the next attempt."""
    reason: str = ""
    """One line for the application's events, e.g. 'restarting in 10 s (retry 2 of 3)'."""


def decide(
    policy: RestartPolicy,
    *,
    outcome: Outcome,
    counters: RetryCounters,
    healthy_seconds: float = 0,
    suspend_on_failure: bool = False,
) -> Decision:
    """What the restart ``policy`` makes of an attempt that ended with ``outcome``.

    ``healthy_seconds`` is how long the attempt ran (in RUNNING) before it ended.
    """
    if policy.reset_after_seconds is not None and healthy_seconds >= policy.reset_after_seconds:
        counters = RetryCounters()
    if outcome is Outcome.SUCCEEDED:
        if policy.type is RestartPolicyType.ALWAYS:
            delay = policy.on_failure_retry_interval
            return Decision(
                AppEvent.RERUN_SCHEDULED,
                RetryCounters(),
                delay,
                f"finished; restarting in {delay} s (restart policy Always)",
            )
        return Decision(AppEvent.FINISHED, RetryCounters(), reason="finished")
    return _after_failure(policy, outcome, counters, suspend_on_failure)


def _after_failure(
    policy: RestartPolicy, outcome: Outcome, counters: RetryCounters, suspend_on_failure: bool
) -> Decision:
    restarts = policy.type is not RestartPolicyType.NEVER
    if outcome is Outcome.SUBMISSION_FAILED:
        failures = counters.submission_failures + 1
        counters = replace(counters, submission_failures=failures)
        retries = policy.on_submission_failure_retries
        delay = _doubling(policy.on_submission_failure_retry_interval, failures, policy)
        unlimited, what = False, "failed to start"
    else:
        failures = counters.execution_failures + 1
        counters = replace(counters, execution_failures=failures)
        retries = policy.on_failure_retries
        delay = retry_interval(policy, policy.on_failure_retry_interval, failures)
        unlimited, what = policy.type is RestartPolicyType.ALWAYS, "failed"
    if unlimited or (restarts and failures <= retries):
        of = "" if unlimited else f" of {retries}"
        return Decision(
            AppEvent.RERUN_SCHEDULED,
            counters,
            delay,
            f"{what}; restarting in {delay} s (retry {failures}{of})",
        )
    spent = "no retries" if not restarts else f"{_retries(retries)} spent"
    if suspend_on_failure:
        return Decision(AppEvent.SUSPENDED, counters, reason=f"{what}; {spent}; suspended")
    return Decision(AppEvent.FAILED, counters, reason=f"{what}; {spent}")


def _retries(count: int) -> str:
    return "1 retry" if count == 1 else f"{count} retries"


def retry_interval(policy: RestartPolicy, interval: int, failures: int) -> int:
    """Seconds before retry number ``failures``: fixed, or doubling up to ``maxInterval``."""
    if policy.backoff is Backoff.FIXED:
        return interval
    return _doubling(interval, failures, policy)


def _doubling(interval: int, failures: int, policy: RestartPolicy) -> int:
    """``interval`` doubled for each failure before this one, up to ``maxInterval``."""
    doublings = min(failures - 1, 62)
    longest = max(policy.max_interval, interval)
    return min(interval * (1 << doublings), longest)
