"""The job form's Health rules: one row of controls per rule of ``spec.health.rules``.

A rule has more fields than a key/value row, and its actions are check boxes, which a browser
leaves out when unticked; so each row's controls carry the row's number in their names
(``rule_3_metric``, ``rule_3_actions``) and the rows are read back in that order. A row whose
name and threshold are both blank is an empty row to fill in, and dropped. Numbers are taken as
typed when they are not numbers, for the job service to refuse at their field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamjobs.domain.alerts import Comparison, HealthAction, HealthMetric

RULES_CONTROL = "health_rules"
"""The control of errors about the rules as a whole (``spec.health``)."""
RULES_PATH = ("spec", "health", "rules")
RULE_FIELDS = {
    "name": "name",
    "metric": "metric",
    "comparison": "comparison",
    "threshold": "threshold",
    "durationSeconds": "duration",
    "batches": "batches",
    "windowSeconds": "window",
    "actions": "actions",
}
"""Each manifest field of a rule and the suffix of its control in a row."""
_ROW_CONTROL = re.compile(r"^rule_(\d+)_([a-z]+)$")

METRIC_CHOICES = tuple((metric.value, metric.value) for metric in HealthMetric)
COMPARISON_CHOICES = tuple((comparison.value, comparison.value) for comparison in Comparison)
ACTION_CHOICES = tuple(action.value for action in HealthAction)


@dataclass(frozen=True)
class RuleRow:
    """One health rule's controls, as typed."""

    name: str = ""
    metric: str = HealthMetric.STALLED_SECONDS.value
    comparison: str = Comparison.GREATER.value
    threshold: str = ""
    duration: str = "0"
    batches: str = "1"
    window: str = ""
    actions: tuple[str, ...] = (HealthAction.NOTIFY.value,)

    @property
    def blank(self) -> bool:
        return not self.name.strip() and not self.threshold.strip()


def rule_control(index: int | str, field: str) -> str:
    """The name (and id) of the control of ``field`` (a ``RuleRow`` field) in row ``index``."""
    return f"rule_{index}_{field}"


def rules_from_fields(submitted: Mapping[str, Sequence[str]]) -> tuple[RuleRow, ...]:
    """The rows as submitted, in the order of their numbers, blank ones dropped."""
    indexes = sorted(
        {int(found.group(1)) for key in submitted if (found := _ROW_CONTROL.match(key))}
    )

    def first(index: int, field: str, default: str) -> str:
        values = submitted.get(rule_control(index, field))
        return values[0] if values else default

    rows = []
    for index in indexes:
        row = RuleRow(
            name=first(index, "name", ""),
            metric=first(index, "metric", ""),
            comparison=first(index, "comparison", ""),
            threshold=first(index, "threshold", ""),
            duration=first(index, "duration", ""),
            batches=first(index, "batches", ""),
            window=first(index, "window", ""),
            actions=tuple(submitted.get(rule_control(index, "actions"), ())),
        )
        if not row.blank:
            rows.append(row)
    return tuple(rows)


def rules_from_spec(spec: Mapping[str, Any]) -> tuple[RuleRow, ...]:
    """The rows showing a manifest's ``spec.health.rules`` (as stored or as typed in YAML)."""
    health = spec.get("health")
    rules = health.get("rules") if isinstance(health, Mapping) else None
    if not isinstance(rules, list):
        return ()
    defaults = RuleRow()
    rows = []
    for rule in rules:
        if not isinstance(rule, Mapping):
            continue
        actions = rule.get("actions")
        rows.append(
            RuleRow(
                name=_text(rule.get("name")),
                metric=_text(rule.get("metric")),
                comparison=_text(rule.get("comparison")) or defaults.comparison,
                threshold=_text(rule.get("threshold")),
                duration=_text(rule.get("durationSeconds")) or defaults.duration,
                batches=_text(rule.get("batches")) or defaults.batches,
                window=_text(rule.get("windowSeconds")),
                actions=(
                    tuple(_text(action) for action in actions)
                    if isinstance(actions, list)
                    else defaults.actions
                ),
            )
        )
    return tuple(rows)


def rules_value(rows: Iterable[RuleRow]) -> list[dict[str, Any]]:
    """The manifest's ``spec.health.rules`` the rows make (unticked actions: none, which the
    rules refuse at the row's actions)."""
    rules: list[dict[str, Any]] = []
    for row in rows:
        rule: dict[str, Any] = {
            "name": row.name.strip(),
            "metric": row.metric.strip(),
            "comparison": row.comparison.strip() or Comparison.GREATER.value,
            "threshold": _number(row.threshold, real=True),
            "durationSeconds": _number(row.duration),
            "batches": _number(row.batches),
            "windowSeconds": _number(row.window),
            "actions": list(row.actions),
        }
        rules.append({key: value for key, value in rule.items() if value is not None})
    return rules


def rule_error_control(rest: Sequence[str | int], rows: Sequence[RuleRow]) -> str:
    """The control of an error whose path continues ``spec.health.rules`` with ``rest``: the
    field's in its row, the row's name when the path names no field, else the rules' own."""
    if not rest or not isinstance(rest[0], int) or not 0 <= rest[0] < len(rows):
        return RULES_CONTROL
    field = RULE_FIELDS.get(str(rest[1])) if len(rest) > 1 else None
    return rule_control(rest[0], field or "name")


def _number(text: str, *, real: bool = False) -> int | float | str | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    if real:
        try:
            return float(text)
        except ValueError:
            pass
    return text


def _text(value: Any) -> str:
    """A field as typed: a whole-number threshold stored as 300.0 reads 300."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
