"""One rule for how serious an application event is (domain/event_levels.py)."""

from __future__ import annotations

import pytest

from streamjobs.domain.event_levels import EVENT_LEVELS, EventLevel, event_level
from streamjobs.domain.states import AppEvent, AppState, transition

EMITTED_KINDS = {
    # services/applications.py: Run, Resume, and request_on (Stop, Abort; a Delete that aborts)
    "run-requested",
    "resumed",
    "stop-requested",
    "abort-requested",
    "suspend-requested",
    # services/snapshot_starts.py: a Run from a snapshot, a start on a fresh checkpoint
    "started-from-snapshot",
    "started-fresh",
    # services/upgrades.py, upgrade_progress.py, upgrade_rollbacks.py: an upgrade's steps
    "upgrade-requested",
    "upgrade-started",
    "upgraded",
    "upgrade-watching",
    "upgrade-succeeded",
    "upgrade-rolling-back",
    "rolled-back",
    "upgrade-failed",
    # services/snapshot_collection.py: a snapshot collected or refused
    "snapshot-taken",
    "snapshot-failed",
    # supervisor/submissions.py: jar resolutions, adopted drivers, failed submissions
    "jars-resolving",
    "jars-resolved",
    "jars-unresolved",
    "driver-recovered",
    "submission-failed",
    # supervisor/reconcile.py: the tick's notes
    "submitted",
    "driver-running",
    "driver-silent",
    "restarting",
    "completed",
    "failed",
    "suspended",
    # supervisor/reconcile.py _terminated: the state an ended Stop or Abort leads to, lowered
    *(
        str(transition(AppState.TERMINATING, event)).lower()
        for event in (AppEvent.STOPPED, AppEvent.ABORTED, AppEvent.FAILED)
    ),
    # supervisor/loop.py: an attempt's driver process ended
    "driver-exited",
    # services/reports.py: what the runner reported
    "first-batch-committed",
    "query-failed",
    # the supervisor's health step: a rule fired, a firing rule recovered
    "health-firing",
    "health-recovered",
}
"""Every kind the server records (``grep -rn 'add_event\\|note=\\|notes.append' src``)."""


@pytest.mark.parametrize("kind", sorted(EMITTED_KINDS))
def test_every_kind_the_server_records_has_a_level(kind: str) -> None:
    assert kind in EVENT_LEVELS, f"event kind {kind!r} has no level in domain/event_levels.py"


def test_no_level_is_kept_for_a_kind_nothing_records() -> None:
    assert set(EVENT_LEVELS) == EMITTED_KINDS


@pytest.mark.parametrize(
    ("kind", "level"),
    [
        ("aborted", EventLevel.INFO),
        ("abort-requested", EventLevel.INFO),
        ("stopped", EventLevel.INFO),
        ("jars-unresolved", EventLevel.WARNING),
        ("submission-failed", EventLevel.WARNING),
        ("driver-silent", EventLevel.WARNING),
        ("restarting", EventLevel.WARNING),
        ("suspended", EventLevel.WARNING),
        ("failed", EventLevel.ERROR),
        ("query-failed", EventLevel.ERROR),
        ("health-firing", EventLevel.WARNING),
        ("health-recovered", EventLevel.INFO),
    ],
)
def test_levels_of_what_goes_wrong_and_what_a_person_asks(kind: str, level: EventLevel) -> None:
    assert event_level(kind) is level


@pytest.mark.parametrize("kind", ["", "something-an-older-server-recorded", "FAILED"])
def test_a_kind_this_version_does_not_know_is_information(kind: str) -> None:
    assert event_level(kind) is EventLevel.INFO


def test_levels_read_as_the_ui_shows_them() -> None:
    assert [str(level) for level in EventLevel] == ["info", "warning", "error"]
