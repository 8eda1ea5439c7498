"""The job page's Notifications tab: the job's subscriptions (``spec.notifications``) as an
editable list, and its health rules (``spec.health.rules``) with where each stands for the live
application.

The tab edits the subscriptions only; a save replaces ``spec.notifications`` in the job's
manifest and gives it to the job service as the form does (a new version, the same rules). Each
subscription is a row whose controls carry the row's number (``sub_2_events``): its events and
rules are check boxes, which a browser leaves out when unticked. A row without a destination is
the empty one to fill in; a row ticked Remove is left out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from streamjobs.domain.alerts import HEALTH_EVENTS, SUBSCRIBABLE_EVENTS, NotificationEvent
from streamjobs.domain.errors import FieldError
from streamjobs.domain.health import RuleState
from streamjobs.web.yaml_text import path_parts

NOTIFICATIONS_PATH = ("spec", "notifications")
SUBSCRIPTION_FIELDS = ("destination", "events", "rules")
EVENT_CHOICES = tuple(event.value for event in NotificationEvent if event in SUBSCRIBABLE_EVENTS)
HEALTH_EVENT_VALUES = frozenset(event.value for event in HEALTH_EVENTS)
_ROW_CONTROL = re.compile(r"^sub_(\d+)_([a-z]+)$")


@dataclass(frozen=True)
class SubscriptionRow:
    """One subscription's controls, as typed or as stored."""

    destination: str = ""
    events: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleStanding:
    """One health rule as the tab shows it, with where it stands for the live application."""

    name: str
    condition: str
    duration_seconds: Any
    actions: tuple[str, ...]
    standing: str
    """firing, holding, ok, waiting (not judged yet) or none (no live application)."""
    since: datetime | None = None


@dataclass(frozen=True)
class NotificationsTab:
    """What the tab shows and, after a refused save, what was typed and where it was wrong."""

    rows: tuple[SubscriptionRow, ...]
    """The form's rows: as stored, or as typed when a save was refused."""
    destinations: tuple[str, ...]
    rules: tuple[RuleStanding, ...]
    stored: tuple[SubscriptionRow, ...] = ()
    """The subscriptions as stored, which the table shows."""
    errors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    summary: tuple[str, ...] = ()
    notice: str | None = None
    version: str = ""

    def errors_of(self, control: str) -> tuple[str, ...]:
        return self.errors.get(control, ())

    @property
    def rule_names(self) -> tuple[str, ...]:
        return tuple(rule.name for rule in self.rules)

    @property
    def event_choices(self) -> tuple[str, ...]:
        return EVENT_CHOICES

    @property
    def health_events(self) -> frozenset[str]:
        return HEALTH_EVENT_VALUES


def control(index: int | str, name: str) -> str:
    """The name (and id) of the control of ``name`` in subscription row ``index``."""
    return f"sub_{index}_{name}"


def subscriptions_of(manifest: Mapping[str, Any]) -> tuple[SubscriptionRow, ...]:
    """The rows of a manifest's ``spec.notifications``."""
    spec = manifest.get("spec")
    listed = spec.get("notifications") if isinstance(spec, Mapping) else None
    rows = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, Mapping):
            rows.append(
                SubscriptionRow(
                    destination=str(item.get("destination") or ""),
                    events=tuple(str(event) for event in item.get("events") or ()),
                    rules=tuple(str(rule) for rule in item.get("rules") or ()),
                )
            )
    return tuple(rows)


def subscriptions_from_fields(
    submitted: Mapping[str, Sequence[str]],
) -> tuple[SubscriptionRow, ...]:
    """The rows as submitted, by their numbers: the empty row and the removed ones left out."""
    indexes = sorted({int(m.group(1)) for key in submitted if (m := _ROW_CONTROL.match(key))})
    rows = []
    for index in indexes:
        if submitted.get(control(index, "remove")):
            continue
        destinations = submitted.get(control(index, "destination")) or [""]
        destination = destinations[0].strip()
        if not destination:
            continue
        rows.append(
            SubscriptionRow(
                destination=destination,
                events=tuple(submitted.get(control(index, "events"), ())),
                rules=tuple(submitted.get(control(index, "rules"), ())),
            )
        )
    return tuple(rows)


def with_subscriptions(
    manifest: Mapping[str, Any], rows: Iterable[SubscriptionRow], version: str
) -> dict[str, Any]:
    """``manifest`` with its ``spec.notifications`` replaced by ``rows``, at ``version`` (the
    one the tab was opened at, so a save over a newer version is refused)."""
    changed = copy.deepcopy(dict(manifest))
    spec = changed.setdefault("spec", {})
    spec["notifications"] = [
        {"destination": row.destination, "events": list(row.events), "rules": list(row.rules)}
        for row in rows
    ]
    if version:
        changed.setdefault("metadata", {})["resourceVersion"] = version
    return changed


def placed_errors(
    errors: Iterable[FieldError], rows: Sequence[SubscriptionRow]
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The service's errors by the row control they name, and the rest for the summary (each
    with its path: they are about another part of the job)."""
    by_control: dict[str, list[str]] = {}
    summary: list[str] = []
    for error in errors:
        parts = path_parts(error.path) if error.path else None
        rest = parts[len(NOTIFICATIONS_PATH) :] if parts else []
        if (
            parts
            and tuple(parts[: len(NOTIFICATIONS_PATH)]) == NOTIFICATIONS_PATH
            and rest
            and isinstance(rest[0], int)
            and 0 <= rest[0] < len(rows)
        ):
            name = str(rest[1]) if len(rest) > 1 else "destination"
            name = name if name in SUBSCRIPTION_FIELDS else "destination"
            by_control.setdefault(control(rest[0], name), []).append(error.message)
        else:
            summary.append(f"{error.path}: {error.message}" if error.path else error.message)
    return {key: tuple(value) for key, value in by_control.items()}, tuple(summary)


def rule_standings(
    manifest: Mapping[str, Any], states: Mapping[str, RuleState] | None
) -> tuple[RuleStanding, ...]:
    """The job's rules with where each stands; ``states`` None: the job has no live
    application."""
    spec = manifest.get("spec")
    health = spec.get("health") if isinstance(spec, Mapping) else None
    rules = health.get("rules") if isinstance(health, Mapping) else None
    standings = []
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, Mapping):
            continue
        name = str(rule.get("name", ""))
        threshold = _number_text(rule.get("threshold"))
        condition = f"{rule.get('metric')} {rule.get('comparison', '>')} {threshold}"
        if rule.get("metric") == "batchDurationMs" and (rule.get("batches") or 1) != 1:
            condition += f" for {rule.get('batches')} batches in a row"
        if rule.get("windowSeconds"):
            condition += f" within {rule.get('windowSeconds')} s"
        standing, since = _standing(None if states is None else states.get(name), states is None)
        standings.append(
            RuleStanding(
                name=name,
                condition=condition,
                duration_seconds=rule.get("durationSeconds", 0),
                actions=tuple(str(action) for action in rule.get("actions") or ("notify",)),
                standing=standing,
                since=since,
            )
        )
    return tuple(standings)


def _number_text(value: Any) -> str:
    """A threshold as a person writes it: 300, not 300.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _standing(state: RuleState | None, no_application: bool) -> tuple[str, datetime | None]:
    if no_application:
        return "none", None
    if state is None:
        return "waiting", None
    if state.firing_since is not None:
        return "firing", state.firing_since
    if state.holding_since is not None:
        return "holding", state.holding_since
    return "ok", None
