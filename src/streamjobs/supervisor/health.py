"""The supervisor's health step: judge each running application's health rules every tick, and
act on a rule that fires or recovers.

The loop hands ``HealthStep.run`` the applications it supervises. For each RUNNING one whose job
has rules (``ApplicationTerms.health_rules``) it builds the ``domain.health.Window``: the
application's latest figures, its current attempt's micro-batches from the stored progress
reports (parsed with ``domain.reports``), the times of its restarts (its ``restarting`` events)
and, for a python or jvm program with a stall rule, when its driver's streaming progress last
moved (``launch.streaming_progress``, asked no more often than the executors are:
``EXECUTOR_POLL_SECONDS``). Each rule is judged by ``domain.health.judge``.

A rule's state is written when it changes (its condition starts or stops holding, it fires or
recovers), not every tick. A transition is one transaction: the rule's state, the application's
event (``health-firing``, a warning; ``health-recovered``, information), the notices of the
``notify`` action (``services.outbox.enqueue_notifications``) and, for a firing ``restart``
action, the application's RESTART request, which the next tick carries out
(``reconcile``): the driver is ended and a new attempt starts from the checkpoint.

One application's failure (a store error, a driver that does not answer) is logged and never
stops the others' rules.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from streamjobs.domain.alerts import HealthAction, HealthMetric, HealthRule, NotificationEvent
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.health import Batch, Judgement, RuleState, Transition, Window, judge
from streamjobs.domain.progress import committed_time, reported_time
from streamjobs.domain.reports import ProgressReport, parse_report
from streamjobs.domain.states import AppState
from streamjobs.launch.streaming_progress import (
    StreamingProgress,
    StreamingProgressReader,
    read_streaming_progress,
)
from streamjobs.services.application_state import move
from streamjobs.services.outbox import enqueue_notifications
from streamjobs.services.resources import on_fresh_reads
from streamjobs.store import ApplicationRecord, AttemptRecord, ProgressRecord
from streamjobs.store.db import Store
from streamjobs.supervisor.attempt_facts import handle_of
from streamjobs.supervisor.executors import EXECUTOR_POLL_SECONDS
from streamjobs.supervisor.reconcile import Request
from streamjobs.supervisor.terms import ApplicationTerms

log = logging.getLogger(__name__)

PROGRESS_WINDOW = 100
"""How many of an application's newest progress reports its micro-batches are read from."""
EVENT_WINDOW = 500
"""How many of an application's newest events its restarts are counted in."""
BATCH_METRICS = frozenset({HealthMetric.BATCH_DURATION_MS})
"""Metrics judged on the recent micro-batches; the others need only the latest figures (which
carry when a batch last committed and last had input)."""

TermsOf = Callable[[ApplicationRecord], ApplicationTerms]
KeyedBatch = tuple[tuple[str, int], Batch]
"""A micro-batch with its (query name, batch id)."""


class HealthStep:
    """Judges the health rules of the supervised applications (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        progress_reader: StreamingProgressReader = read_streaming_progress,
    ) -> None:
        """``progress_reader`` asks a program's driver for its streaming progress."""
        self._store = store
        self._clock = clock
        self._progress_reader = progress_reader
        self._progress: dict[tuple[str, int], tuple[datetime, StreamingProgress | None]] = {}
        """(application, attempt) -> when its driver was last asked, and its answer."""
        self._parsed: dict[int, KeyedBatch | None] = {}
        """Stored progress report id -> its micro-batch, parsed at an earlier tick."""
        self._parsing: dict[int, KeyedBatch | None] = {}
        """The same for this tick: what the next tick may reuse."""

    def run(
        self,
        supervised: Iterable[tuple[ApplicationRecord, AttemptRecord | None]],
        terms_of: TermsOf,
    ) -> list[tuple[str, str, Transition]]:
        """Judge every RUNNING application's rules; the (application, rule, transition) of
        each rule that fired or recovered."""
        changed: list[tuple[str, str, Transition]] = []
        running: set[str] = set()
        self._parsed, self._parsing = self._parsing, {}
        for application, attempt in supervised:
            if application.state != AppState.RUNNING or attempt is None:
                continue
            running.add(application.id)
            try:
                terms = terms_of(application)
                if terms.health_rules:
                    changed += self._judge_application(application, attempt, terms)
            except Exception:
                log.exception("health rules of application %s could not be judged", application.id)
        self._progress = {key: seen for key, seen in self._progress.items() if key[0] in running}
        return changed

    def _judge_application(
        self, application: ApplicationRecord, attempt: AttemptRecord, terms: ApplicationTerms
    ) -> list[tuple[str, str, Transition]]:
        rules = terms.health_rules
        metrics = {rule.metric for rule in rules}
        with self._store.reading() as repos:
            states = repos.health.of(application.id)
            progress = (
                repos.applications.progress(application.id, limit=PROGRESS_WINDOW)
                if metrics & BATCH_METRICS and terms.reports
                else []
            )
            events = (
                repos.applications.events(application.id, limit=EVENT_WINDOW, newest_first=True)
                if HealthMetric.RESTARTS in metrics
                else []
            )
        now = self._clock.now()
        progress_at = None
        if not terms.reports and HealthMetric.STALLED_SECONDS in metrics:
            progress_at = self._program_progress(application, attempt, now)
        window = Window(
            figures=application.latest or {},
            batches=batches_of(progress, attempt.number, parse=self._batch_of),
            restarts=[event.at for event in events if event.kind == "restarting"],
            running_since=application.running_since,
            is_program=not terms.reports,
            progress_at=progress_at,
        )
        changed: list[tuple[str, str, Transition]] = []
        for rule in rules:
            before = states.get(rule.name, RuleState())
            judgement = judge(rule, before, window, now)
            if _worth_writing(before, judgement):
                self._record(application, attempt, rule, judgement, [r.name for r in rules], now)
            if judgement.transition is not Transition.NONE:
                changed.append((application.id, rule.name, judgement.transition))
        return changed

    def _batch_of(self, record: ProgressRecord) -> KeyedBatch | None:
        """``batch_of`` the record, parsed once over the ticks that read it."""
        found = self._parsed[record.id] if record.id in self._parsed else batch_of(record)
        self._parsing[record.id] = found
        return found

    def _program_progress(
        self, application: ApplicationRecord, attempt: AttemptRecord, now: datetime
    ) -> datetime | None:
        """When the program's driver last committed a micro-batch, as its REST API said when
        last asked (at most every ``EXECUTOR_POLL_SECONDS``)."""
        key = (application.id, attempt.number)
        asked = self._progress.get(key)
        if asked is None or (now - asked[0]).total_seconds() >= EXECUTOR_POLL_SECONDS:
            answer = self._progress_reader(handle_of(attempt)) if attempt.pid is not None else None
            if answer is None and asked is not None:
                answer = asked[1]  # no answer now: what it said last still stands
            asked = (now, answer)
            self._progress[key] = asked
        return asked[1].last_batch_at if asked[1] is not None else None

    def _record(
        self,
        application: ApplicationRecord,
        attempt: AttemptRecord,
        rule: HealthRule,
        judgement: Judgement,
        rule_names: Sequence[str],
        now: datetime,
    ) -> None:
        """Write the rule's new state and, on a transition, its event, notices and action, in
        one transaction (read afresh when a report lands in between)."""

        def write() -> None:
            with self._store.transaction() as repos:
                repos.health.keep_only(application.id, rule_names)
                repos.health.put(application.id, rule.name, judgement.state)
                if judgement.transition is Transition.NONE:
                    return
                current = repos.applications.get(application.id)
                firing = judgement.transition is Transition.FIRED
                restart = (
                    firing
                    and HealthAction.RESTART in rule.actions
                    and current.state == AppState.RUNNING
                    and current.requested is None
                )
                message = health_message(rule, judgement, restart=restart)
                kind = "health-firing" if firing else "health-recovered"
                repos.applications.add_event(application.id, at=now, kind=kind, message=message)
                if HealthAction.NOTIFY in rule.actions:
                    enqueue_notifications(
                        repos,
                        job_name=application.job_name,
                        application_id=application.id,
                        event=NotificationEvent.HEALTH_FIRING
                        if firing
                        else NotificationEvent.HEALTH_RECOVERED,
                        message=message,
                        at=now,
                        attempt=attempt.number,
                        rule=rule.name,
                        figures=notice_figures(current.latest, rule, judgement),
                    )
                if restart:
                    move(
                        repos,
                        current,
                        None,
                        at=now,
                        changes={
                            "requested": Request.RESTART.value,
                            "requested_at": now,
                            "requested_by": f"health rule {rule.name}",
                        },
                    )

        on_fresh_reads(write)
        if judgement.transition is not Transition.NONE:
            log.warning(
                "application %s: health rule %s %s (value %s)",
                application.name,
                rule.name,
                judgement.transition,
                judgement.value,
            )


def _worth_writing(before: RuleState, judgement: Judgement) -> bool:
    """Whether the judgement changed more than the rule's last value: a write per rule per
    tick would be most of the store's writes."""
    after = judgement.state
    return judgement.transition is not Transition.NONE or (
        before.holding_since != after.holding_since or before.firing_since != after.firing_since
    )


def batches_of(
    records: Iterable[ProgressRecord],
    attempt: int,
    *,
    parse: Callable[[ProgressRecord], KeyedBatch | None] | None = None,
) -> list[Batch]:
    """The committed micro-batches of ``attempt`` among the stored progress reports, oldest
    first, each once (Spark repeats a batch id in its reports while a query waits for data)."""
    batches: dict[tuple[str, int], Batch] = {}
    for record in records:
        if record.attempt != attempt or record.type != "progress":
            continue
        found = (parse or batch_of)(record)
        if found is not None:
            batches.setdefault(*found)
    return sorted(batches.values(), key=lambda batch: batch.committed_at)


def batch_of(record: ProgressRecord) -> KeyedBatch | None:
    """The committed micro-batch a stored progress report tells of, with its (query, batch id);
    None for a trigger that ran no batch or a payload this runner's models do not read."""
    try:
        report = parse_report(record.payload)
    except InvalidInput:
        return None  # stored by an older runner in a shape this one does not read
    if not isinstance(report, ProgressReport):
        return None
    progress = report.progress
    committed = reported_time(committed_time(progress))
    if committed is None or progress.batch_id is None:
        return None
    duration = (progress.duration_ms or {}).get("triggerExecution")
    batch = Batch(committed, None if duration is None else float(duration), progress.num_input_rows)
    return (report.query_name, progress.batch_id), batch


def health_message(rule: HealthRule, judgement: Judgement, *, restart: bool) -> str:
    """What the event and the notices say."""
    value = "unknown" if judgement.value is None else f"{judgement.value:g}"
    condition = f"{rule.metric} {rule.comparison} {rule.threshold:g}"
    if judgement.transition is Transition.FIRED:
        held = f" for {rule.duration_seconds} s" if rule.duration_seconds else ""
        message = f"health rule {rule.name} fired: {condition}{held} (now {value})"
        return message + ("; restarting the application" if restart else "")
    return f"health rule {rule.name} recovered: {condition} no longer holds (now {value})"


def notice_figures(
    latest: Mapping[str, Any] | None, rule: HealthRule, judgement: Judgement
) -> dict[str, Any]:
    """The application's latest figures (without the per-query detail) and the rule's value."""
    figures = {key: value for key, value in (latest or {}).items() if key != "queries"}
    figures[str(rule.metric)] = judgement.value
    figures["threshold"] = rule.threshold
    return figures
