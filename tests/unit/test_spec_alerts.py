"""A job's alert fields: notification subscriptions and health rules, what parses, and which
error each broken rule gives at which path; and which notification event a state change is."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.alerts import (
    Comparison,
    HealthAction,
    HealthMetric,
    NotificationEvent,
    lifecycle_event,
)
from streamjobs.domain.states import AppState
from tests.unit.manifests import (
    PIPELINE,
    assert_error,
    broken,
    changed,
    parse,
    python_manifest,
)

BACKLOG = {"name": "backlog", "metric": "recordsBehind", "threshold": 1000, "durationSeconds": 60}
RULES = "spec.health.rules"
NOTIFY = "spec.notifications"


def with_rules(*rules: dict[str, Any], base: dict[str, Any] = PIPELINE) -> dict[str, Any]:
    return changed(base, (RULES, list(rules)))


class TestHealthRules:
    def test_a_rule_takes_its_defaults(self) -> None:
        rule = parse(with_rules(BACKLOG)).spec.health.rules[0]
        assert rule.metric is HealthMetric.RECORDS_BEHIND
        assert rule.comparison is Comparison.GREATER
        assert rule.duration_seconds == 60
        assert rule.batches == 1
        assert rule.actions == [HealthAction.NOTIFY]

    def test_a_job_without_rules_has_none(self) -> None:
        spec = parse(PIPELINE).spec
        assert spec.health.rules == []
        assert spec.notifications == []

    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "metric": "lag"}])],
                f"{RULES}[0].metric",
                "stalledSeconds",
                "unknown-metric",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "durationSeconds": -5}])],
                f"{RULES}[0].durationSeconds",
                "greater than or equal to 0",
                "negative-duration",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "comparison": "=="}])],
                f"{RULES}[0].comparison",
                "'>'",
                "unknown-comparison",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "actions": []}])],
                f"{RULES}[0].actions",
                "at least 1",
                "no-action",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "actions": ["page"]}])],
                f"{RULES}[0].actions[0]",
                "notify",
                "unknown-action",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "actions": ["notify", "notify"]}])],
                f"{RULES}[0].actions",
                "twice",
                "action-twice",
            ),
            broken(
                PIPELINE,
                [(RULES, [BACKLOG, BACKLOG])],
                f"{RULES}[1].name",
                "already named 'backlog'",
                "duplicate-name",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "batches": 3}])],
                f"{RULES}[0].batches",
                "batchDurationMs metric only",
                "batches-elsewhere",
            ),
            broken(
                PIPELINE,
                [(RULES, [{"name": "loop", "metric": "restarts", "threshold": 3}])],
                f"{RULES}[0].windowSeconds",
                "required",
                "restarts-without-window",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "windowSeconds": 60}])],
                f"{RULES}[0].windowSeconds",
                "restarts metric only",
                "window-elsewhere",
            ),
            broken(
                PIPELINE,
                [
                    (
                        RULES,
                        [
                            {
                                "name": "loop",
                                "metric": "restarts",
                                "threshold": 3,
                                "windowSeconds": 600,
                                "actions": ["restart"],
                            }
                        ],
                    )
                ],
                f"{RULES}[0].actions",
                "each restart would feed it",
                "restarts-restarting",
            ),
            broken(
                PIPELINE,
                [(RULES, [{**BACKLOG, "threshold": "many"}])],
                f"{RULES}[0].threshold",
                "number",
                "threshold-not-a-number",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_a_program_is_judged_on_stalls_and_restarts_only(self) -> None:
        program = python_manifest()
        stall = {"name": "stall", "metric": "stalledSeconds", "threshold": 300}
        assert parse(with_rules(stall, base=program)).spec.health.rules[0].name == "stall"
        assert_error(with_rules(BACKLOG, base=program), f"{RULES}[0].metric", "python or jvm")

    def test_slow_batches_count_batches_in_a_row(self) -> None:
        slow = {"name": "slow", "metric": "batchDurationMs", "threshold": 5000, "batches": 3}
        assert parse(with_rules(slow)).spec.health.rules[0].batches == 3


class TestSubscriptions:
    def test_a_subscription_names_a_destination_and_events(self) -> None:
        manifest = changed(
            with_rules(BACKLOG),
            (
                NOTIFY,
                [
                    {
                        "destination": "ops",
                        "events": ["failed", "health-firing"],
                        "rules": ["backlog"],
                    }
                ],
            ),
        )
        subscription = parse(manifest).spec.notifications[0]
        assert subscription.destination == "ops"
        assert subscription.events == [
            NotificationEvent.FAILED,
            NotificationEvent.HEALTH_FIRING,
        ]

    @pytest.mark.parametrize(
        ("subscriptions", "path", "message_part"),
        [
            ([{"destination": "ops", "events": []}], f"{NOTIFY}[0].events", "at least 1"),
            (
                [{"destination": "ops", "events": ["exploded"]}],
                f"{NOTIFY}[0].events[0]",
                "'started'",
            ),
            (
                [{"destination": "ops", "events": ["failed", "failed"]}],
                f"{NOTIFY}[0].events",
                "twice",
            ),
            (
                [
                    {"destination": "ops", "events": ["failed"]},
                    {"destination": "ops", "events": ["stopped"]},
                ],
                f"{NOTIFY}[1].destination",
                "subscribed twice",
            ),
            (
                [{"destination": "ops", "events": ["health-firing"], "rules": ["nope"]}],
                f"{NOTIFY}[0].rules[0]",
                "no rule named 'nope'",
            ),
            (
                [{"destination": "ops", "events": ["failed"], "rules": ["backlog"]}],
                f"{NOTIFY}[0].rules",
                "health-firing and health-recovered events only",
            ),
            (
                [{"destination": "ops", "events": ["failed", "test"]}],
                f"{NOTIFY}[0].events[1]",
                "cannot be subscribed to",
            ),
            (
                [{"destination": " ops", "events": ["failed"]}],
                f"{NOTIFY}[0].destination",
                "whitespace",
            ),
        ],
    )
    def test_rules(self, subscriptions: list[Any], path: str, message_part: str) -> None:
        assert_error(changed(with_rules(BACKLOG), (NOTIFY, subscriptions)), path, message_part)


class TestLifecycleEvents:
    @pytest.mark.parametrize(
        ("previous", "state", "event"),
        [
            (None, AppState.STARTING, NotificationEvent.STARTED),
            (AppState.SUSPENDED, AppState.STARTING, NotificationEvent.STARTED),
            (AppState.PENDING_RERUN, AppState.STARTING, None),
            (AppState.STARTING, AppState.RUNNING, NotificationEvent.RUNNING),
            (AppState.RUNNING, AppState.PENDING_RERUN, NotificationEvent.RESTARTING),
            (AppState.RUNNING, AppState.FAILED, NotificationEvent.FAILED),
            (AppState.RUNNING, AppState.SUSPENDED, NotificationEvent.SUSPENDED),
            (AppState.RUNNING, AppState.COMPLETED, NotificationEvent.COMPLETED),
            (AppState.RUNNING, AppState.TERMINATING, None),
            (AppState.TERMINATING, AppState.STOPPED, NotificationEvent.STOPPED),
            (AppState.TERMINATING, AppState.ABORTED, NotificationEvent.ABORTED),
            (AppState.RUNNING, AppState.RUNNING, None),
        ],
    )
    def test_event_of_a_state_change(
        self, previous: AppState | None, state: AppState, event: NotificationEvent | None
    ) -> None:
        assert lifecycle_event(previous, state) is event

    def test_every_state_but_terminating_is_told(self) -> None:
        told = {lifecycle_event(None, state) for state in AppState} - {None}
        told |= {lifecycle_event(AppState.PENDING_RERUN, AppState.RUNNING)}
        missing = set(NotificationEvent) - told
        assert missing == {
            NotificationEvent.HEALTH_FIRING,
            NotificationEvent.HEALTH_RECOVERED,
            NotificationEvent.TEST,
        }
