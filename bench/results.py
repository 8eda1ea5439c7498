"""What a figure measured: samples, their medians and spreads, ratios and targets."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Spread:
    """The median and the range of a set of samples."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Spread:
        return cls(statistics.median(samples), min(samples), max(samples))


@dataclass(frozen=True)
class Target:
    """A bound on a comparison: on its ratio (candidate median / baseline median) by default, or
    on its difference (candidate median - baseline median, in the metric's unit)."""

    threshold: float
    at_least: bool = True
    difference: bool = False

    def measure(self, candidate: float, baseline: float) -> float:
        return candidate - baseline if self.difference else candidate / baseline

    def met(self, value: float) -> bool:
        return value >= self.threshold if self.at_least else value <= self.threshold

    def describe(self) -> str:
        bound = f"baseline {self.threshold:+g}" if self.difference else f"{self.threshold:g}"
        return f"{'≥' if self.at_least else '≤'} {bound}"


@dataclass(frozen=True)
class Comparison:
    """One figure's candidate against its baseline, sample by sample (pairs share a repetition)."""

    name: str
    metric: str
    candidate_label: str
    baseline_label: str
    candidate: tuple[float, ...]
    baseline: tuple[float, ...]
    target: Target | None = None

    @property
    def candidate_spread(self) -> Spread:
        return Spread.of(self.candidate)

    @property
    def baseline_spread(self) -> Spread:
        return Spread.of(self.baseline)

    @property
    def ratio(self) -> float:
        return self.candidate_spread.median / self.baseline_spread.median

    @property
    def paired_ratios(self) -> Spread:
        """The spread of candidate / baseline within each repetition."""
        pairs = zip(self.candidate, self.baseline, strict=True)
        return Spread.of([candidate / baseline for candidate, baseline in pairs])

    @property
    def difference(self) -> float:
        return self.candidate_spread.median - self.baseline_spread.median

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        medians = self.candidate_spread.median, self.baseline_spread.median
        return self.target.met(self.target.measure(*medians))

    @property
    def conclusive(self) -> bool:
        """Whether every repetition's own pair falls on the same side of the target."""
        if self.target is None:
            return True
        pairs = zip(self.candidate, self.baseline, strict=True)
        verdicts = {self.target.met(self.target.measure(*pair)) for pair in pairs}
        return len(verdicts) == 1


@dataclass(frozen=True)
class Limit:
    """An absolute bound on a measurement's median, in the measurement's own unit: below
    ``threshold`` ("p99 < 50 ms") by default, or at least ``threshold`` ("≥ 196 requests/s")."""

    threshold: float
    at_least: bool = False

    def met(self, value: float) -> bool:
        return value >= self.threshold if self.at_least else value < self.threshold

    def describe(self, unit: str = "") -> str:
        text = f"{'≥' if self.at_least else '<'} {self.threshold:g}"
        return f"{text} {unit}".rstrip()


@dataclass(frozen=True)
class Measurement:
    """One figure against an absolute limit rather than a baseline: its samples (one per
    repetition) and, when it has one, the limit their median must keep."""

    name: str
    metric: str
    label: str
    samples: tuple[float, ...]
    limit: Limit | None = None

    @property
    def spread(self) -> Spread:
        return Spread.of(self.samples)

    @property
    def met(self) -> bool | None:
        return None if self.limit is None else self.limit.met(self.spread.median)

    @property
    def conclusive(self) -> bool:
        """Whether every sample falls on the same side of the limit."""
        if self.limit is None:
            return True
        return len({self.limit.met(sample) for sample in self.samples}) == 1


@dataclass
class FigureResult:
    """A figure's comparisons, and the Markdown sections that explain and detail them."""

    number: int
    slug: str
    title: str
    comparisons: list[Comparison]
    method: str
    details: str = ""
    notes: list[str] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)

    @property
    def chart_file(self) -> str:
        return f"figure-{self.number}-{self.slug}.png"
