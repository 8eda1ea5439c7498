"""Judging a job's health rules over a window of a running application's figures.

The supervisor observes each running application every tick and hands ``judge`` one rule, the
rule's state as the last judgement left it, a ``Window`` of what it observed (the application's
latest figures, its recent micro-batches, its recent restarts) and the time. ``judge`` gives the
rule's new state and what changed: nothing, ``FIRED`` (the condition has now held for the rule's
``durationSeconds``) or ``RECOVERED`` (a firing rule's condition cleared). A rule fires once per
episode: while it keeps holding, later judgements change nothing but its last value.

A figure the window lacks (a report that has not come, a source that does not tell) is no
evidence either way: it never fires a rule and never recovers one. A rule not yet firing starts
over (its condition must hold again for the whole duration, on figures that are known); a firing
rule stays firing until a known figure clears it. ``restarts`` is never missing (no restart is
zero restarts).

Pure: no I/O and no clock; the time is always given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from streamjobs.domain.alerts import HealthMetric, HealthRule

LATEST_FIGURE_OF = {
    HealthMetric.RECORDS_BEHIND: "recordsBehind",
    HealthMetric.MAX_PARTITION_RECORDS_BEHIND: "maxPartitionRecordsBehind",
    HealthMetric.SECONDS_BEHIND: "secondsBehind",
    HealthMetric.STATE_ROWS: "stateRows",
    HealthMetric.STATE_MEMORY_BYTES: "stateMemoryBytes",
}
"""Metrics that are one of the application's latest figures, by the figure's key."""


class Transition(StrEnum):
    """What a judgement changed."""

    NONE = "none"
    FIRED = "fired"
    RECOVERED = "recovered"


@dataclass(frozen=True)
class RuleState:
    """Where one rule of one application stands between judgements."""

    holding_since: datetime | None = None
    """Since when the condition has held, on known figures, without a break (None: it does not)."""
    firing_since: datetime | None = None
    """When the rule fired, while it fires (None: it does not)."""
    last_value: float | None = None
    """The metric's value at the last judgement (None: the figure was missing)."""
    judged_at: datetime | None = None

    @property
    def firing(self) -> bool:
        return self.firing_since is not None


@dataclass(frozen=True)
class Batch:
    """One committed micro-batch of one of the application's queries."""

    committed_at: datetime
    duration_ms: float | None
    input_rows: int | None


@dataclass(frozen=True)
class Window:
    """What the supervisor observed of one running application, for its rules.

    ``figures`` are the application's latest figures (``domain.progress``, with the keys of
    ``LATEST_FIGURE_OF`` and ``lastCommittedAt``, ``lastInputAt`` as ISO times and
    ``inputAvailable``); ``batches`` its recent micro-batches, oldest first; ``restarts`` when
    its recent restarts happened. ``running_since`` is when its current attempt started running:
    a new attempt has not stalled nor gone silent before it ran. ``progress_at`` is, for a
    python or jvm program, when its driver's streaming progress was last seen to move (Spark's
    REST API), else None.
    """

    figures: Mapping[str, Any]
    batches: Sequence[Batch] = ()
    restarts: Sequence[datetime] = ()
    running_since: datetime | None = None
    is_program: bool = False
    progress_at: datetime | None = None


@dataclass(frozen=True)
class Judgement:
    """A rule's new state and what changed."""

    state: RuleState
    transition: Transition
    value: float | None


def judge(rule: HealthRule, state: RuleState, window: Window, now: datetime) -> Judgement:
    """Judge ``rule`` over ``window`` at ``now``, from ``state`` (``RuleState()`` at first)."""
    value, holds = condition(rule, window, now)
    if holds is None:
        if state.firing:
            new = replace(state, last_value=None, judged_at=now)
        else:
            new = RuleState(judged_at=now)
        return Judgement(new, Transition.NONE, None)
    if not holds:
        new = RuleState(last_value=value, judged_at=now)
        return Judgement(new, Transition.RECOVERED if state.firing else Transition.NONE, value)
    holding_since = state.holding_since or now
    held = replace(state, holding_since=holding_since, last_value=value, judged_at=now)
    if state.firing:
        return Judgement(held, Transition.NONE, value)
    if now - holding_since >= timedelta(seconds=rule.duration_seconds):
        return Judgement(replace(held, firing_since=now), Transition.FIRED, value)
    return Judgement(held, Transition.NONE, value)


def condition(rule: HealthRule, window: Window, now: datetime) -> tuple[float | None, bool | None]:
    """The metric's value in ``window`` at ``now`` and whether the rule's condition holds
    (None for both: the figure is missing)."""
    metric = rule.metric
    if metric is HealthMetric.BATCH_DURATION_MS:
        return _batches_in_a_row(rule, window)
    value = metric_value(metric, window, now, window_seconds=rule.window_seconds)
    if value is None:
        return None, None
    return value, rule.comparison.holds(value, rule.threshold)


def metric_value(
    metric: HealthMetric, window: Window, now: datetime, *, window_seconds: int | None = None
) -> float | None:
    """The value of ``metric`` (any but batchDurationMs) in ``window`` at ``now``, or None."""
    if metric in LATEST_FIGURE_OF:
        return figure_number(window.figures.get(LATEST_FIGURE_OF[metric]))
    if metric is HealthMetric.STALLED_SECONDS:
        return _stalled_seconds(window, now)
    if metric is HealthMetric.SILENT_SECONDS:
        last_input = _latest(
            figure_time(window.figures.get("lastInputAt")),
            *(batch.committed_at for batch in window.batches if batch.input_rows),
        )
        return _seconds_since(_latest(last_input, window.running_since), now)
    if metric is HealthMetric.RESTARTS:
        if window_seconds is None:
            return None
        start = now - timedelta(seconds=window_seconds)
        return float(sum(1 for at in window.restarts if start < at <= now))
    raise ValueError(f"{metric} is judged over batches, not one value")


def _stalled_seconds(window: Window, now: datetime) -> float | None:
    """Seconds since the last committed micro-batch while input is available (0 when none is
    waiting); for a program, since its driver's streaming progress last moved."""
    if window.is_program:
        return _seconds_since(_latest(window.progress_at, window.running_since), now)
    available = window.figures.get("inputAvailable")
    if available is None:
        return None
    if available is False:
        return 0.0
    committed = _latest(
        figure_time(window.figures.get("lastCommittedAt")),
        *(batch.committed_at for batch in window.batches),
    )
    return _seconds_since(_latest(committed, window.running_since), now)


def _batches_in_a_row(rule: HealthRule, window: Window) -> tuple[float | None, bool | None]:
    """The latest batch's duration, and whether the last ``batches`` all break the threshold:
    one of them that does not clears the condition; fewer batches that all do are not enough
    to tell (missing)."""
    durations = [batch.duration_ms for batch in window.batches if batch.duration_ms is not None]
    recent = durations[-rule.batches :]
    if not recent:
        return None, None
    if not all(rule.comparison.holds(duration, rule.threshold) for duration in recent):
        return recent[-1], False
    if len(recent) < rule.batches:
        return None, None
    return recent[-1], True


def _latest(*times: datetime | None) -> datetime | None:
    known = [at for at in times if at is not None]
    return max(known) if known else None


def _seconds_since(at: datetime | None, now: datetime) -> float | None:
    return None if at is None else max(0.0, (now - at).total_seconds())


def figure_time(value: Any) -> datetime | None:
    """A time among an application's figures: an ISO 8601 time with its zone (Spark's
    ``2026-01-01T00:00:00.000Z`` too); None for anything else (a missing figure)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def figure_number(value: Any) -> float | None:
    """A number among an application's figures; None for anything else (a missing figure),
    ``true``/``false``, NaN and the infinities included."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
