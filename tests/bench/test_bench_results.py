"""The benchmark's targets: bounds on a comparison's ratio, or on its difference."""

from __future__ import annotations

import pytest
from bench.results import Comparison, Target


def comparison(
    candidate: tuple[float, ...], baseline: tuple[float, ...], target: Target
) -> Comparison:
    return Comparison(
        name="recovery",
        metric="s",
        candidate_label="streamjobs",
        baseline_label="bare",
        candidate=candidate,
        baseline=baseline,
        target=target,
    )


def test_a_ratio_target_bounds_candidate_over_baseline() -> None:
    at_most = Target(1.10, at_least=False)
    assert at_most.measure(11.0, 10.0) == pytest.approx(1.1)
    assert comparison((10.9,), (10.0,), at_most).met is True
    assert comparison((11.2,), (10.0,), at_most).met is False
    assert Target(0.97).describe() == "≥ 0.97"
    assert at_most.describe() == "≤ 1.1"


def test_a_difference_target_bounds_candidate_minus_baseline() -> None:
    one_second_more = Target(1.0, at_least=False, difference=True)
    assert one_second_more.measure(18.5, 17.0) == pytest.approx(1.5)
    assert one_second_more.describe() == "≤ baseline +1"
    met = comparison((18.0, 17.9, 30.0), (17.0, 17.5, 10.0), one_second_more)
    assert met.difference == pytest.approx(1.0)  # medians 18.0 and 17.0
    assert met.met is True
    # A ratio bound of 1.0 would have failed it: the kind of bound matters, not the number.
    assert comparison((18.0,), (17.0,), Target(1.0, at_least=False)).met is False
    assert comparison((18.1,), (17.0,), one_second_more).met is False


def test_a_difference_target_is_conclusive_only_when_every_pair_agrees() -> None:
    target = Target(1.0, at_least=False, difference=True)
    assert comparison((17.5, 18.0), (17.0, 17.2), target).conclusive is True
    # Same medians' verdict, but the second repetition alone is 2 s over.
    assert comparison((17.5, 19.2), (17.0, 17.2), target).conclusive is False
    assert Target(3.0, at_least=True, difference=True).met(3.0) is True


def test_a_ratio_target_is_conclusive_as_before() -> None:
    target = Target(1.10, at_least=False)
    assert comparison((10.5, 10.8), (10.0, 10.0), target).conclusive is True
    assert comparison((10.5, 11.5), (10.0, 10.0), target).conclusive is False
    assert comparison((1.0,), (1.0,), target).paired_ratios.median == 1.0
