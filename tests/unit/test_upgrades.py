"""The pure rules of upgrades: which modes are checked, the watch's judgement of the upgraded
application, "changed since running", the diff of two specs, and ``spec.upgrade``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.spec import parse_manifest
from streamjobs.domain.states import AppState
from streamjobs.domain.upgrades import (
    ACTIVE_UPGRADE_STATUSES,
    TERMINAL_UPGRADE_STATUSES,
    Upgraded,
    UpgradeMode,
    UpgradeStatus,
    Verdict,
    changed_since_running,
    judge_watch,
    spec_diff,
)
from tests.factories import pipeline_manifest

pytestmark = pytest.mark.snapshots

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
UNTIL = NOW + timedelta(seconds=100)
STARTING, WATCHING = UpgradeStatus.STARTING, UpgradeStatus.WATCHING


def judged(
    status: UpgradeStatus,
    state: AppState,
    *,
    window: int = 300,
    until: datetime | None = None,
    now: datetime = NOW,
    **fields: object,
) -> tuple[Verdict, str | None]:
    upgraded = Upgraded(name="orders-2", state=state, **fields)  # type: ignore[arg-type]
    judgement = judge_watch(status, upgraded, window_seconds=window, watch_until=until, now=now)
    return judgement.verdict, judgement.reason


def test_every_status_is_active_or_terminal_and_never_both() -> None:
    assert set(UpgradeStatus) == ACTIVE_UPGRADE_STATUSES | TERMINAL_UPGRADE_STATUSES
    assert not ACTIVE_UPGRADE_STATUSES & TERMINAL_UPGRADE_STATUSES


def test_only_stateless_skips_the_compatibility_check() -> None:
    assert [mode for mode in UpgradeMode if not mode.continues_state] == [UpgradeMode.STATELESS]


@pytest.mark.parametrize(
    ("job", "running", "changed"),
    [(3, 2, True), (3, 3, False), (3, None, False), (3, 4, False)],
)
def test_changed_since_running(job: int, running: int | None, changed: bool) -> None:
    assert changed_since_running(job, running) is changed


def test_a_starting_application_is_waited_for() -> None:
    assert judged(STARTING, AppState.STARTING) == (Verdict.WAIT, None)
    assert judged(STARTING, AppState.PENDING_RERUN) == (Verdict.WAIT, None)


def test_once_it_runs_it_is_watched_for_the_window() -> None:
    upgraded = Upgraded(name="orders-2", state=AppState.RUNNING)
    judgement = judge_watch(STARTING, upgraded, window_seconds=300, watch_until=None, now=NOW)
    assert judgement.verdict is Verdict.WATCH
    assert judgement.watch_until == NOW + timedelta(seconds=300)


def test_it_succeeds_when_it_still_runs_at_the_end_of_the_window() -> None:
    assert judged(WATCHING, AppState.RUNNING, until=UNTIL, now=UNTIL - timedelta(seconds=1)) == (
        Verdict.WAIT,
        None,
    )
    verdict, reason = judged(WATCHING, AppState.RUNNING, window=100, until=UNTIL, now=UNTIL)
    assert verdict is Verdict.SUCCEED
    assert reason == "orders-2 ran for 100 s without failing"


@pytest.mark.parametrize(
    ("state", "fields", "words"),
    [
        (AppState.FAILED, {}, "orders-2 failed"),
        (AppState.SUSPENDED, {}, "was suspended"),
        (AppState.PENDING_RERUN, {"failures": 1}, "failed an attempt (1 failure)"),
        (AppState.RUNNING, {"failures": 2}, "(2 failures)"),
        (AppState.RUNNING, {"firing": {"lag": NOW, "errors": NOW}}, "health rule errors, lag"),
    ],
)
@pytest.mark.parametrize("status", [STARTING, WATCHING])
def test_trouble_in_the_window_rolls_it_back(
    status: UpgradeStatus, state: AppState, fields: dict[str, object], words: str
) -> None:
    verdict, reason = judged(status, state, until=UNTIL if status is WATCHING else None, **fields)
    assert verdict is Verdict.ROLL_BACK
    assert words in (reason or "")


def test_with_rollback_off_trouble_fails_the_upgrade_and_running_succeeds_it() -> None:
    verdict, reason = judged(STARTING, AppState.FAILED, window=0)
    assert verdict is Verdict.FAIL
    assert "rollback is off" in (reason or "")
    assert judged(STARTING, AppState.RUNNING, window=0)[0] is Verdict.SUCCEED


def test_a_rule_that_fired_after_the_window_does_not_roll_it_back() -> None:
    late = {"lag": UNTIL + timedelta(seconds=1)}
    now = UNTIL + timedelta(seconds=2)
    assert judged(WATCHING, AppState.RUNNING, until=UNTIL, now=now, firing=late)[0] is (
        Verdict.SUCCEED
    )


def test_an_application_a_person_ended_ends_the_watch_without_a_rollback() -> None:
    assert judged(WATCHING, AppState.STOPPED, until=UNTIL)[0] is Verdict.SUCCEED
    assert judged(STARTING, AppState.ABORTED)[0] is Verdict.FAIL
    assert judged(STARTING, AppState.COMPLETED)[0] is Verdict.SUCCEED


def test_the_diff_of_two_specs_is_unified_yaml_with_sql_as_blocks() -> None:
    before = pipeline_manifest("orders")
    after = pipeline_manifest("orders")
    after["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] = "SELECT *\nFROM ticks\nWHERE x"
    diff = spec_diff(before, after, from_label="job version 1", to_label="job version 2")
    lines = diff.splitlines()
    assert lines[:2] == ["--- job version 1", "+++ job version 2"]
    assert "-        sql: SELECT * FROM ticks" in lines
    assert "+        sql: |-" in lines
    assert "+          WHERE x" in lines
    assert spec_diff(before, before, from_label="a", to_label="b") == ""


def test_spec_upgrade_defaults_to_five_minutes_and_refuses_a_negative_window() -> None:
    assert parse_manifest(pipeline_manifest()).spec.upgrade.rollback_within_seconds == 300
    never = parse_manifest(pipeline_manifest(upgrade={"rollbackWithinSeconds": 0}))
    assert never.spec.upgrade.rollback_within_seconds == 0
    with pytest.raises(InvalidInput, match=r"spec\.upgrade\.rollbackWithinSeconds"):
        parse_manifest(pipeline_manifest(upgrade={"rollbackWithinSeconds": -1}))
    with pytest.raises(InvalidInput, match=r"spec\.upgrade\.window"):
        parse_manifest(pipeline_manifest(upgrade={"window": 3}))
