"""What a figure measured: samples, their medians and spreads, ratios and targets.

Every figure compares a candidate (streamjobs) with a baseline (hand-written PySpark, bare
``spark-submit``...) measured on the same machine in the same run, several times each. A
``Comparison`` holds both sets of samples and the target on their ratio; a ``FigureResult`` holds a
figure's comparisons and the Markdown that explains its method and details. ``bench.report``
turns them into ``REPORT.md`` and charts without knowing which figure it draws.
"""

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
        if not samples:
            raise ValueError("no samples")
        return cls(statistics.median(samples), min(samples), max(samples))


@dataclass(frozen=True)
class Target:
    """A bound on a comparison's ratio (candidate median / baseline median)."""

    threshold: float
    at_least: bool = True
    """True: the ratio must be >= threshold (throughput); False: <= threshold (time, memory)."""

    def met(self, ratio: float) -> bool:
        return ratio >= self.threshold if self.at_least else ratio <= self.threshold

    def describe(self) -> str:
        return f"{'≥' if self.at_least else '≤'} {self.threshold:g}"


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
        """Candidate median / baseline median: what the target is checked on."""
        return self.candidate_spread.median / self.baseline_spread.median

    @property
    def paired_ratios(self) -> Spread:
        """The spread of candidate / baseline within each repetition."""
        pairs = zip(self.candidate, self.baseline, strict=True)
        return Spread.of([candidate / baseline for candidate, baseline in pairs])

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met(self.ratio)

    @property
    def conclusive(self) -> bool:
        """Whether every repetition's own ratio falls on the same side of the target."""
        if self.target is None:
            return True
        spread = self.paired_ratios
        return self.target.met(spread.low) == self.target.met(spread.high)


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

    @property
    def chart_file(self) -> str:
        return f"figure-{self.number}-{self.slug}.png"
