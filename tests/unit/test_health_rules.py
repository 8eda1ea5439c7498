"""Health rules judged over windows of figures, at times the tests choose (``domain.health``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamjobs.domain.alerts import HealthRule
from streamjobs.domain.health import Batch, RuleState, Transition, Window, judge

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def rule(metric: str, threshold: float, **more: Any) -> HealthRule:
    return HealthRule.model_validate(
        {"name": "r", "metric": metric, "threshold": threshold, **more}
    )


def run(
    health_rule: HealthRule, windows: list[tuple[float, Window]]
) -> list[tuple[Transition, float | None]]:
    """Judge the rule over each (seconds, window) in turn; the transitions and values."""
    state, seen = RuleState(), []
    for seconds, window in windows:
        judgement = judge(health_rule, state, window, at(seconds))
        state = judgement.state
        seen.append((judgement.transition, judgement.value))
    return seen


def behind(records: float | None) -> Window:
    return Window(figures={} if records is None else {"recordsBehind": records})


def test_fires_once_after_its_duration_and_recovers_once() -> None:
    backlog = rule("recordsBehind", 100, durationSeconds=30)
    seen = run(
        backlog,
        [
            (0, behind(500)),
            (29, behind(600)),
            (30, behind(700)),
            (60, behind(800)),
            (61, behind(50)),
            (62, behind(40)),
        ],
    )
    assert seen == [
        (Transition.NONE, 500),
        (Transition.NONE, 600),
        (Transition.FIRED, 700),
        (Transition.NONE, 800),
        (Transition.RECOVERED, 50),
        (Transition.NONE, 40),
    ]


def test_a_break_in_the_condition_restarts_its_duration() -> None:
    backlog = rule("recordsBehind", 100, durationSeconds=30)
    seen = run(backlog, [(0, behind(500)), (20, behind(10)), (40, behind(500)), (69, behind(500))])
    assert [transition for transition, _ in seen] == [Transition.NONE] * 4
    assert (
        run(
            backlog, [(0, behind(500)), (20, behind(10)), (20.5, behind(500)), (50.5, behind(500))]
        )[-1][0]
        is Transition.FIRED
    )


def test_duration_zero_fires_on_the_first_judgement_that_holds() -> None:
    seen = run(rule("recordsBehind", 100), [(0, behind(100)), (1, behind(101)), (2, behind(102))])
    assert [transition for transition, _ in seen] == [
        Transition.NONE,
        Transition.FIRED,
        Transition.NONE,
    ]


def test_a_missing_figure_never_fires_and_never_recovers() -> None:
    backlog = rule("recordsBehind", 100, durationSeconds=10)
    # not firing: the missing figure breaks the holding, so the duration counts again
    seen = run(backlog, [(0, behind(500)), (5, behind(None)), (11, behind(500)), (20, behind(500))])
    assert [transition for transition, _ in seen] == [Transition.NONE] * 4
    # firing: it stays firing through the missing figure and recovers on a known one
    seen = run(backlog, [(0, behind(500)), (10, behind(500)), (11, behind(None)), (12, behind(1))])
    assert seen == [
        (Transition.NONE, 500),
        (Transition.FIRED, 500),
        (Transition.NONE, None),
        (Transition.RECOVERED, 1),
    ]


@pytest.mark.parametrize(
    ("metric", "key"),
    [
        ("recordsBehind", "recordsBehind"),
        ("maxPartitionRecordsBehind", "maxPartitionRecordsBehind"),
        ("secondsBehind", "secondsBehind"),
        ("stateRows", "stateRows"),
        ("stateMemoryBytes", "stateMemoryBytes"),
    ],
)
def test_latest_figure_metrics(metric: str, key: str) -> None:
    seen = run(
        rule(metric, 10),
        [(0, Window({key: 5})), (1, Window({key: 11})), (2, Window({key: 10}))],
    )
    assert seen == [(Transition.NONE, 5), (Transition.FIRED, 11), (Transition.RECOVERED, 10)]


def test_a_figure_that_is_not_a_number_is_missing() -> None:
    seen = run(
        rule("stateRows", 1), [(0, Window({"stateRows": "many"})), (1, Window({"stateRows": True}))]
    )
    assert seen == [(Transition.NONE, None), (Transition.NONE, None)]


def test_less_than_comparisons() -> None:
    low = rule("stateRows", 10, comparison="<=")
    assert run(low, [(0, Window({"stateRows": 10})), (1, Window({"stateRows": 11}))]) == [
        (Transition.FIRED, 10),
        (Transition.RECOVERED, 11),
    ]


def stalled(
    committed: float | None, *, available: bool | None = True, running: float = 0
) -> Window:
    figures: dict[str, Any] = {} if available is None else {"inputAvailable": available}
    if committed is not None:
        figures["lastCommittedAt"] = at(committed).isoformat()
    return Window(figures, running_since=at(running))


def test_stalled_seconds_count_from_the_last_committed_batch_while_input_waits() -> None:
    stall = rule("stalledSeconds", 60)
    seen = run(
        stall,
        [
            (30, stalled(0)),
            (61, stalled(0)),
            (90, stalled(80)),
            (200, stalled(100, available=False)),
        ],
    )
    assert seen == [
        (Transition.NONE, 30),
        (Transition.FIRED, 61),
        (Transition.RECOVERED, 10),
        (Transition.NONE, 0),
    ]


def test_stalled_seconds_of_an_attempt_that_never_committed_count_from_its_start() -> None:
    stall = rule("stalledSeconds", 60)
    assert run(stall, [(50, stalled(None, running=0)), (70, stalled(None, running=0))]) == [
        (Transition.NONE, 50),
        (Transition.FIRED, 70),
    ]
    # a restarted attempt has not stalled before it ran, whatever the old one committed
    assert run(stall, [(100, stalled(0, running=90))]) == [(Transition.NONE, 10)]


def test_stalled_seconds_are_missing_when_no_one_says_whether_input_waits() -> None:
    assert run(rule("stalledSeconds", 1), [(100, stalled(0, available=None))]) == [
        (Transition.NONE, None)
    ]


def test_stalled_seconds_from_batches_when_the_figures_lack_the_commit_time() -> None:
    window = Window({"inputAvailable": True}, batches=[Batch(at(40), 10, 1), Batch(at(50), 10, 0)])
    assert run(rule("stalledSeconds", 5), [(60, window)]) == [(Transition.FIRED, 10)]


def test_stalled_seconds_of_a_program_count_from_its_drivers_progress() -> None:
    stall = rule("stalledSeconds", 60)
    program = Window({}, is_program=True, running_since=at(0), progress_at=at(100))
    seen = run(stall, [(150, program), (161, program)])
    assert seen == [(Transition.NONE, 50), (Transition.FIRED, 61)]
    never_moved = Window({}, is_program=True, running_since=at(0))
    assert run(stall, [(61, never_moved)]) == [(Transition.FIRED, 61)]
    assert run(stall, [(61, Window({}, is_program=True))]) == [(Transition.NONE, None)]


def test_silent_seconds_count_from_the_last_batch_with_input() -> None:
    silence = rule("silentSeconds", 120)
    window = Window(
        {"lastInputAt": at(0).isoformat()},
        batches=[Batch(at(10), 5, 0), Batch(at(20), 5, 0)],
        running_since=at(-50),
    )
    assert run(silence, [(100, window), (121, window)]) == [
        (Transition.NONE, 100),
        (Transition.FIRED, 121),
    ]
    with_input = Window({}, batches=[Batch(at(200), 5, 3)], running_since=at(0))
    assert run(silence, [(210, with_input)]) == [(Transition.NONE, 10)]
    assert run(silence, [(210, Window({}))]) == [(Transition.NONE, None)]


def durations(*values: float) -> Window:
    return Window({}, batches=[Batch(at(i), value, 1) for i, value in enumerate(values)])


def test_batch_duration_needs_that_many_slow_batches_in_a_row() -> None:
    slow = rule("batchDurationMs", 1000, batches=3)
    seen = run(
        slow,
        [
            (0, durations(2000, 2000)),
            (0.5, durations(500)),
            (1, durations(2000, 2000, 500, 2000, 2000)),
            (2, durations(2000, 2000, 500, 2000, 2000, 3000)),
            (3, durations(2000, 500)),
        ],
    )
    assert seen == [
        (Transition.NONE, None),
        (Transition.NONE, 500),
        (Transition.NONE, 2000),
        (Transition.FIRED, 3000),
        (Transition.RECOVERED, 500),
    ]


def restarts(*seconds: float) -> Window:
    return Window({}, restarts=[at(s) for s in seconds])


def test_restarts_are_counted_within_the_window() -> None:
    loop = rule("restarts", 2, windowSeconds=600)
    seen = run(
        loop, [(100, restarts(0, 50)), (200, restarts(0, 50, 150)), (620, restarts(0, 50, 150))]
    )
    assert seen == [(Transition.NONE, 2), (Transition.FIRED, 3), (Transition.RECOVERED, 2)]


@given(
    values=st.lists(
        st.one_of(st.none(), st.integers(min_value=0, max_value=200)), min_size=1, max_size=40
    ),
    duration=st.integers(min_value=0, max_value=5),
)
def test_fired_and_recovered_alternate_and_fire_only_after_the_duration(
    values: list[int | None], duration: int
) -> None:
    backlog = rule("recordsBehind", 100, durationSeconds=duration)
    state, firing = RuleState(), False
    for second, value in enumerate(values):
        judgement = judge(backlog, state, behind(value), at(second))
        if judgement.transition is Transition.FIRED:
            assert not firing
            assert value is not None
            assert value > 100
            assert state.holding_since is None or at(second) - state.holding_since >= timedelta(
                seconds=duration
            )
            firing = True
        elif judgement.transition is Transition.RECOVERED:
            assert firing
            assert value is not None
            assert value <= 100
            firing = False
        assert judgement.state.firing is firing
        state = judgement.state
