"""Measurements that more than one figure writes up, made once per bench run.

Figures 2 and 3 read the same rate sessions, and figures 1 and 5 the same throughput runs:
whichever of the two figures runs first makes them, and the other is given the same ones.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

Plan = TypeVar("Plan", bound=Hashable)
Made = TypeVar("Made")
Log = Callable[[str], None]


class SharedMeasurements(Generic[Plan, Made]):
    """``measure(plan, work, log)``, made on the first call for a plan and directory and kept."""

    def __init__(self, name: str, measure: Callable[[Plan, Path, Log], Made]) -> None:
        self._name = name
        self._measure = measure
        self._made: dict[tuple[Plan, Path], Made] = {}

    def get(self, plan: Plan, work: Path, log: Log) -> Made:
        key = (plan, work.resolve())
        if key not in self._made:
            self._made[key] = self._measure(plan, work, log)
        else:
            log(f"{self._name}: reusing what was measured in {work}")
        return self._made[key]
