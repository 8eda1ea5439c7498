"""What the supervisor's tick sees of one application: its ``reconcile.Observed``.

The loop (``supervisor.loop``) polls the application's latest attempt and reads its terms
(``supervisor.terms``); ``observed_from`` puts these together with the application's row as the
observation the pure tick (``supervisor.reconcile``) decides on. It reads nothing itself.
"""

from __future__ import annotations

from streamjobs.domain.policy import RetryCounters
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.supervisor.attempt_facts import failure_cause_of, heartbeat_of, outcome_of
from streamjobs.supervisor.reconcile import Observed, Request, StandbyView
from streamjobs.supervisor.terms import ApplicationTerms


def observed_from(
    application: ApplicationRecord,
    attempt: AttemptRecord | None,
    terms: ApplicationTerms,
    *,
    live: bool,
    ready: bool,
    standby: StandbyView | None = None,
) -> Observed:
    """The application as the tick sees it: its row, its latest ``attempt`` (None: it has had
    none), its ``terms``, whether the attempt's driver is ``live`` and whether it is ``ready``
    (it reported, or its REST API answered), and its ``standby`` driver, if it has had one."""
    return Observed(
        id=application.id,
        version=application.version,
        state=AppState(application.state),
        policy=terms.policy,
        suspend_on_failure=terms.suspend_on_failure,
        counters=RetryCounters(application.submission_failures, application.execution_failures),
        submission_attempts=application.submission_attempts,
        execution_attempts=application.execution_attempts,
        restarts=application.restarts,
        requested=Request(application.requested) if application.requested else None,
        requested_at=application.requested_at,
        next_attempt_at=application.next_attempt_at,
        running_since=application.running_since,
        attempt=attempt.number if attempt else None,
        attempt_live=live,
        exit_code=attempt.exit_code if attempt else None,
        launch_error=application.error_message if attempt and attempt.pid is None else None,
        attempt_judged=bool(attempt and attempt.outcome),
        driver_ready=ready,
        last_heartbeat_at=heartbeat_of(application, attempt),
        holds_queries=terms.reports,
        attempt_outcome=outcome_of(attempt),
        failure_cause=failure_cause_of(attempt),
        takes_snapshots=terms.takes_snapshots,
        wants_standby=terms.standby,
        standby=standby,
    )
