"""The application state machine: every allowed transition, and a typed error for the rest."""

from __future__ import annotations

import itertools

import pytest

from streamjobs.domain.errors import Conflict
from streamjobs.domain.states import (
    ACTIVE_STATES,
    LIVE_STATES,
    PAUSED_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    AppEvent,
    AppState,
    IllegalTransition,
    allows,
    label,
    transition,
)

S, E = AppState, AppEvent

EXPECTED = {
    (S.STARTING, E.DRIVER_RUNNING): S.RUNNING,
    (S.STARTING, E.FINISHED): S.COMPLETED,
    (S.STARTING, E.RERUN_SCHEDULED): S.PENDING_RERUN,
    (S.STARTING, E.FAILED): S.FAILED,
    (S.STARTING, E.SUSPENDED): S.SUSPENDED,
    (S.STARTING, E.ABORT_REQUESTED): S.TERMINATING,
    (S.STARTING, E.STOP_REQUESTED): S.TERMINATING,
    (S.STARTING, E.SUSPEND_REQUESTED): S.TERMINATING,
    (S.RUNNING, E.FINISHED): S.COMPLETED,
    (S.RUNNING, E.RERUN_SCHEDULED): S.PENDING_RERUN,
    (S.RUNNING, E.FAILED): S.FAILED,
    (S.RUNNING, E.SUSPENDED): S.SUSPENDED,
    (S.RUNNING, E.ABORT_REQUESTED): S.TERMINATING,
    (S.RUNNING, E.STOP_REQUESTED): S.TERMINATING,
    (S.RUNNING, E.SUSPEND_REQUESTED): S.TERMINATING,
    (S.PENDING_RERUN, E.RERUN_STARTED): S.STARTING,
    (S.PENDING_RERUN, E.ABORT_REQUESTED): S.ABORTED,
    (S.PENDING_RERUN, E.STOP_REQUESTED): S.STOPPED,
    (S.PENDING_RERUN, E.SUSPEND_REQUESTED): S.SUSPENDED,
    (S.TERMINATING, E.ABORTED): S.ABORTED,
    (S.TERMINATING, E.STOPPED): S.STOPPED,
    (S.TERMINATING, E.FAILED): S.FAILED,
    (S.TERMINATING, E.SUSPENDED): S.SUSPENDED,
    (S.SUSPENDED, E.RESUMED): S.STARTING,
    (S.SUSPENDED, E.ABORT_REQUESTED): S.ABORTED,
    (S.SUSPENDED, E.STOP_REQUESTED): S.STOPPED,
}


@pytest.mark.parametrize(("state", "event"), sorted(EXPECTED))
def test_every_allowed_transition(state: AppState, event: AppEvent) -> None:
    assert transition(state, event) is EXPECTED[(state, event)]
    assert allows(state, event)


def test_the_table_holds_exactly_the_allowed_transitions() -> None:
    assert dict(TRANSITIONS) == EXPECTED


@pytest.mark.parametrize(
    ("state", "event"),
    [pair for pair in itertools.product(AppState, AppEvent) if pair not in EXPECTED],
)
def test_every_other_pair_is_an_illegal_transition(state: AppState, event: AppEvent) -> None:
    with pytest.raises(IllegalTransition) as raised:
        transition(state, event, application="orders-3")
    assert isinstance(raised.value, Conflict)
    assert "orders-3" in raised.value.detail
    assert str(state) in raised.value.detail


def test_aborting_a_finished_application_says_it_has_ended() -> None:
    with pytest.raises(IllegalTransition, match="cannot take an abort"):
        transition(S.COMPLETED, E.ABORT_REQUESTED)


def test_the_groups_cover_every_state_once() -> None:
    groups = [TERMINAL_STATES, ACTIVE_STATES, PAUSED_STATES]
    assert sorted(itertools.chain(*groups)) == sorted(AppState)
    assert LIVE_STATES == ACTIVE_STATES | PAUSED_STATES
    assert {S.COMPLETED, S.FAILED, S.ABORTED, S.STOPPED} == TERMINAL_STATES


def test_nothing_leaves_a_terminal_state() -> None:
    assert not [pair for pair in TRANSITIONS if pair[0] in TERMINAL_STATES]


def test_every_non_terminal_state_can_be_aborted_and_stopped() -> None:
    for state in LIVE_STATES - {S.TERMINATING}:
        assert allows(state, E.ABORT_REQUESTED)
        assert allows(state, E.STOP_REQUESTED)


@pytest.mark.snapshots
class TestSuspendByAPerson:
    def test_a_starting_or_running_application_stops_first(self) -> None:
        for state in (S.STARTING, S.RUNNING):
            assert transition(state, E.SUSPEND_REQUESTED) is S.TERMINATING
        assert transition(S.TERMINATING, E.SUSPENDED) is S.SUSPENDED

    def test_one_waiting_for_a_restart_suspends_at_once(self) -> None:
        assert transition(S.PENDING_RERUN, E.SUSPEND_REQUESTED) is S.SUSPENDED

    @pytest.mark.parametrize("state", [S.SUSPENDED, S.TERMINATING, *sorted(TERMINAL_STATES)])
    def test_others_cannot_be_suspended_and_the_refusal_says_which_can(
        self, state: AppState
    ) -> None:
        with pytest.raises(IllegalTransition, match="only a starting, running or pending"):
            transition(state, E.SUSPEND_REQUESTED, application="orders-3")


class TestLabel:
    @pytest.mark.parametrize(
        ("state", "text"),
        [
            (AppState.PENDING_RERUN, "Pending Rerun"),
            (AppState.TERMINATING, "Terminating"),
            (AppState.RUNNING, "Running"),
            ("SUSPENDED", "Suspended"),
        ],
    )
    def test_the_api_value_title_cased(self, state: AppState | str, text: str) -> None:
        assert label(state) == text

    def test_every_state_has_a_distinct_label(self) -> None:
        assert len({label(state) for state in AppState}) == len(AppState)
