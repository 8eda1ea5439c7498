"""What a job asks to be told and to be watched for: notification subscriptions and health rules.

``spec.notifications`` says which of an application's events go to which destinations;
``spec.health.rules`` says which figures of a running application are unhealthy, for how long, and
what happens then (notify, restart the application, or both). The models check each field;
``alert_errors`` the rules that tie fields together. How a rule is judged over a window of
figures is ``domain.health``; which event a state change is, ``lifecycle_event``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from streamjobs.domain.errors import FieldError
from streamjobs.domain.formats import ReferenceName
from streamjobs.domain.manifest_model import JavaInt, ManifestModel
from streamjobs.domain.states import AppState


class NotificationEvent(StrEnum):
    """What a subscription can be told of."""

    STARTED = "started"
    """A Run or a Resume started the application."""
    RUNNING = "running"
    COMPLETED = "completed"
    STOPPED = "stopped"
    ABORTED = "aborted"
    FAILED = "failed"
    SUSPENDED = "suspended"
    RESTARTING = "restarting"
    """The restart policy starts another attempt (the message names its number)."""
    HEALTH_FIRING = "health-firing"
    """A health rule's condition held for its duration."""
    HEALTH_RECOVERED = "health-recovered"
    """A firing health rule's condition cleared."""
    TEST = "test"
    """A destination's "send test": about no job, and never subscribed to."""


HEALTH_EVENTS = frozenset({NotificationEvent.HEALTH_FIRING, NotificationEvent.HEALTH_RECOVERED})
LIFECYCLE_EVENTS = frozenset(NotificationEvent) - HEALTH_EVENTS - {NotificationEvent.TEST}
"""Events of the application's state machine."""
SUBSCRIBABLE_EVENTS = LIFECYCLE_EVENTS | HEALTH_EVENTS
"""What a subscription may name: every event but ``test``."""

_EVENT_OF_STATE = {
    AppState.RUNNING: NotificationEvent.RUNNING,
    AppState.COMPLETED: NotificationEvent.COMPLETED,
    AppState.STOPPED: NotificationEvent.STOPPED,
    AppState.ABORTED: NotificationEvent.ABORTED,
    AppState.FAILED: NotificationEvent.FAILED,
    AppState.SUSPENDED: NotificationEvent.SUSPENDED,
    AppState.PENDING_RERUN: NotificationEvent.RESTARTING,
}


def lifecycle_event(previous: AppState | None, state: AppState) -> NotificationEvent | None:
    """The event an application entering ``state`` from ``previous`` (None: a new application)
    is, or None (TERMINATING, and STARTING again after PENDING_RERUN, which was ``restarting``)."""
    if state is AppState.STARTING:
        return None if previous is AppState.PENDING_RERUN else NotificationEvent.STARTED
    if state is previous:
        return None
    return _EVENT_OF_STATE.get(state)


class Subscription(ManifestModel):
    """Which events of the job's applications go to one notification destination."""

    destination: ReferenceName
    """The name of a notification destination (Settings -> Notifications)."""
    events: list[NotificationEvent] = Field(min_length=1)
    rules: list[ReferenceName] = []
    """For health-firing and health-recovered: only these rules' (empty: every rule's)."""


class HealthMetric(StrEnum):
    """What a health rule compares with its threshold."""

    STALLED_SECONDS = "stalledSeconds"
    """Seconds without a committed micro-batch while input is available (for python and jvm
    programs: without progress of the driver's streaming queries in its Spark REST API)."""
    RECORDS_BEHIND = "recordsBehind"
    """Kafka records behind the latest offsets, summed over every partition the job reads."""
    MAX_PARTITION_RECORDS_BEHIND = "maxPartitionRecordsBehind"
    """Kafka records behind the latest offset in the partition furthest behind."""
    SECONDS_BEHIND = "secondsBehind"
    """Age of the oldest record not yet processed (the broker's timestamp of the next record)."""
    BATCH_DURATION_MS = "batchDurationMs"
    """Duration of a micro-batch; with ``batches``, that many in a row."""
    SILENT_SECONDS = "silentSeconds"
    """Seconds since a micro-batch last read any input row (a dead upstream)."""
    STATE_ROWS = "stateRows"
    STATE_MEMORY_BYTES = "stateMemoryBytes"
    RESTARTS = "restarts"
    """Restarts of the application within ``windowSeconds``."""


PROGRAM_METRICS = frozenset({HealthMetric.STALLED_SECONDS, HealthMetric.RESTARTS})
"""What a python or jvm program can be judged on: it reports no figures of its own."""


class Comparison(StrEnum):
    """How a figure is compared with a rule's threshold."""

    GREATER = ">"
    GREATER_OR_EQUAL = ">="
    LESS = "<"
    LESS_OR_EQUAL = "<="

    def holds(self, value: float, threshold: float) -> bool:
        """Whether ``value <comparison> threshold``."""
        if self is Comparison.GREATER:
            return value > threshold
        if self is Comparison.GREATER_OR_EQUAL:
            return value >= threshold
        if self is Comparison.LESS:
            return value < threshold
        return value <= threshold


class HealthAction(StrEnum):
    """What happens when a rule fires."""

    NOTIFY = "notify"
    """Send health-firing (and later health-recovered) to the subscribed destinations."""
    RESTART = "restart"
    """Restart the application: a new attempt from its checkpoint (counted as a restart)."""


Threshold = Annotated[float, Field(ge=-(2**53), le=2**53)]


class HealthRule(ManifestModel):
    """One condition on a running application's figures and what to do when it holds."""

    name: ReferenceName
    """Unique in the job; events and notifications name it."""
    metric: HealthMetric
    comparison: Comparison = Comparison.GREATER
    threshold: Threshold
    duration_seconds: JavaInt = Field(default=0, ge=0)
    """How long the condition must hold before the rule fires."""
    batches: JavaInt = Field(default=1, ge=1)
    """batchDurationMs only: how many micro-batches in a row must break the threshold."""
    window_seconds: JavaInt | None = Field(default=None, ge=1)
    """restarts only, and required there: restarts are counted within this window."""
    actions: list[HealthAction] = Field(default=[HealthAction.NOTIFY], min_length=1)


class Health(ManifestModel):
    """The job's health rules, judged by the supervisor while an application runs."""

    rules: list[HealthRule] = []


def alert_errors(
    subscriptions: Sequence[Subscription], health: Health, *, is_program: bool
) -> list[FieldError]:
    """Every rule between the alert fields ``subscriptions`` and ``health`` break;
    ``is_program``: the job runs a python or jvm program, which reports no figures."""
    return [*_rule_errors(health, is_program), *_subscription_errors(subscriptions, health)]


def _rule_errors(health: Health, is_program: bool) -> Iterator[FieldError]:
    seen: set[str] = set()
    for index, rule in enumerate(health.rules):
        path = f"spec.health.rules[{index}]"
        if rule.name in seen:
            yield FieldError(f"{path}.name", f"another rule is already named {rule.name!r}")
        seen.add(rule.name)
        metric = rule.metric
        if is_program and metric not in PROGRAM_METRICS:
            yield FieldError(
                f"{path}.metric",
                f"{metric!r} needs a pipeline's progress reports; a python or jvm program is "
                "judged on stalledSeconds and restarts only",
            )
        if rule.batches != 1 and metric is not HealthMetric.BATCH_DURATION_MS:
            yield FieldError(f"{path}.batches", "applies to the batchDurationMs metric only")
        if metric is HealthMetric.RESTARTS and rule.window_seconds is None:
            yield FieldError(f"{path}.windowSeconds", "required for the restarts metric")
        if metric is not HealthMetric.RESTARTS and rule.window_seconds is not None:
            yield FieldError(f"{path}.windowSeconds", "applies to the restarts metric only")
        if metric is HealthMetric.RESTARTS and HealthAction.RESTART in rule.actions:
            yield FieldError(
                f"{path}.actions",
                "a restarts rule cannot restart the application: each restart would feed it",
            )
        if len(set(rule.actions)) != len(rule.actions):
            yield FieldError(f"{path}.actions", "names an action twice")


def _subscription_errors(
    subscriptions: Sequence[Subscription], health: Health
) -> Iterator[FieldError]:
    rule_names = {rule.name for rule in health.rules}
    destinations: set[str] = set()
    for index, subscription in enumerate(subscriptions):
        path = f"spec.notifications[{index}]"
        if subscription.destination in destinations:
            yield FieldError(
                f"{path}.destination",
                f"{subscription.destination!r} is subscribed twice; list its events once",
            )
        destinations.add(subscription.destination)
        if len(set(subscription.events)) != len(subscription.events):
            yield FieldError(f"{path}.events", "names an event twice")
        for position, event in enumerate(subscription.events):
            if event not in SUBSCRIBABLE_EVENTS:
                yield FieldError(
                    f"{path}.events[{position}]",
                    f"{event!r} is what a destination's send test is; it cannot be subscribed to",
                )
        for position, rule in enumerate(subscription.rules):
            if rule not in rule_names:
                yield FieldError(
                    f"{path}.rules[{position}]", f"no rule named {rule!r} in spec.health.rules"
                )
        if subscription.rules and not HEALTH_EVENTS & set(subscription.events):
            yield FieldError(
                f"{path}.rules", "applies to health-firing and health-recovered events only"
            )
