"""Write ``REPORT.md`` and one PNG chart per figure from the figures' results, with the machine
they ran on: cores, memory, CPU and its speed, Java, Spark, Python, load, commit."""

from __future__ import annotations

import os
import platform
import subprocess
import textwrap
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import matplotlib
import pyspark

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt  # after matplotlib.use
from matplotlib.ticker import StrMethodFormatter

from bench.results import Comparison, FigureResult, Measurement, Spread

SPEED_CHECK_ADDITIONS = 1_000_000
SPEED_CHECK = f"CPU speed check: {SPEED_CHECK_ADDITIONS:,} additions in a Python loop, best of 5"

Machine = dict[str, str]  # the machine table's rows: what, and its value

CANDIDATE_COLOUR = "#1f77b4"
BASELINE_COLOUR = "#9a9a9a"
MISSED_COLOUR = "#c62828"
MET_COLOUR = "#2e7d32"
CHART_COLUMNS = 4
"""Panels per line of a chart (figure 6 has eleven)."""
ABSOLUTE_NOTE = (
    " Measurements held to an absolute limit rather than a baseline give the median and min-max "
    "of their repetitions in the streamjobs column and are checked on that median."
)


def write_report(
    figures: Sequence[FigureResult],
    machine: Machine,
    directory: Path,
    *,
    command: str,
    minutes: float,
) -> Path:
    """Draw every figure's chart into ``directory`` and write ``REPORT.md`` beside them."""
    directory.mkdir(parents=True, exist_ok=True)
    for figure in figures:
        draw_chart(figure, directory / figure.chart_file)
    path = directory / "REPORT.md"
    path.write_text(render(figures, machine, command=command, minutes=minutes), encoding="utf-8")
    return path


def render(
    figures: Sequence[FigureResult], machine: Machine, *, command: str, minutes: float
) -> str:
    sections = [
        "# streamjobs benchmark report",
        f"Written by `{command}` in {minutes:.1f} minutes. Each figure compares streamjobs with "
        "a baseline run on the same machine in the same run; medians of the repetitions, with "
        "min-max. The ratio is streamjobs' median over the baseline's; 'paired' is the range of "
        "that ratio within each repetition. A verdict is 'not conclusive' when some repetitions "
        "meet the target and others miss it."
        + (ABSOLUTE_NOTE if any(figure.measurements for figure in figures) else ""),
        "## Machine\n\n" + table(["", ""], list(machine.items())),
        "## Summary\n\n" + summary_table(figures),
        *(figure_section(figure) for figure in figures),
    ]
    return "\n\n".join(sections) + "\n"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def summary_table(figures: Sequence[FigureResult]) -> str:
    lines = [
        "| figure | comparison | streamjobs | baseline | ratio (paired) | target | met |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for figure in figures:
        for item in figure.comparisons:
            lines.append(
                f"| {figure.number} | {item.name} ({item.metric}) | "
                f"{_spread_text(item.candidate_spread)} | {_spread_text(item.baseline_spread)} | "
                f"{item.ratio:.3f} ({_ratio_range(item.paired_ratios)}) | "
                f"{item.target.describe() if item.target else '—'} | {_verdict(item)} |"
            )
        for measured in figure.measurements:
            lines.append(
                f"| {figure.number} | {measured.name}, {measured.label} ({measured.metric}) | "
                f"{_spread_text(measured.spread)} | — | — | "
                f"{measured.limit.describe(measured.metric) if measured.limit else '—'} | "
                f"{_verdict(measured)} |"
            )
    return "\n".join(lines)


def figure_section(figure: FigureResult) -> str:
    parts = [
        f"## Figure {figure.number}. {figure.title}",
        f"![Figure {figure.number}]({figure.chart_file})",
        "\n".join(
            [
                *(_comparison_line(item) for item in figure.comparisons),
                *(_measurement_line(item) for item in figure.measurements),
            ]
        ),
        "### Method\n\n" + figure.method,
    ]
    if figure.details:
        parts.append("### Details\n\n" + figure.details)
    if figure.notes:
        parts.append("### Notes\n\n" + "\n".join(f"- {note}" for note in figure.notes))
    return "\n\n".join(parts)


def _comparison_line(item: Comparison) -> str:
    target = f"; target {item.target.describe()}: **{_verdict(item)}**" if item.target else ""
    return (
        f"- **{item.name}**: {item.candidate_label} {_spread_text(item.candidate_spread)} "
        f"{item.metric}, {item.baseline_label} {_spread_text(item.baseline_spread)} "
        f"{item.metric}; ratio {item.ratio:.3f} (paired {_ratio_range(item.paired_ratios)})"
        f"{target}."
    )


def _measurement_line(item: Measurement) -> str:
    limit = (
        f"; limit {item.limit.describe(item.metric)}: **{_verdict(item)}**" if item.limit else ""
    )
    return f"- **{item.name}**, {item.label}: {_spread_text(item.spread)} {item.metric}{limit}."


def _spread_text(spread: Spread) -> str:
    return f"{_number(spread.median)} [{_number(spread.low)}-{_number(spread.high)}]"


def _ratio_range(spread: Spread) -> str:
    return f"{spread.low:.3f}-{spread.high:.3f}"


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _verdict(item: Comparison | Measurement) -> str:
    """met / missed on the medians; "not conclusive" when the repetitions disagree."""
    verdict = {True: "met", False: "missed", None: "—"}[item.met]
    return verdict if item.conclusive else f"{verdict}, not conclusive"


def draw_chart(figure: FigureResult, path: Path) -> None:
    """Bars of each comparison's medians with min-max whiskers, every sample as a dot, and the
    ratio with its verdict above each pair; then the measurements, one panel per unit."""
    groups = measurement_groups(figure.measurements)
    count = len(figure.comparisons) + len(groups)
    columns = min(count, CHART_COLUMNS)
    lines = -(-count // columns)
    bars = max((len(group) for group in groups.values()), default=0)
    height = max(4.6, 0.32 * bars + 1.6)
    fig, grid = plt.subplots(
        lines, columns, figsize=(4.2 * columns + 1, height * lines), squeeze=False
    )
    axes = [axis for line in grid for axis in line]
    for axis, item in zip(axes, figure.comparisons, strict=False):
        _draw_comparison(axis, item)
    panels = axes[len(figure.comparisons) : count]
    for axis, (metric, items) in zip(panels, groups.items(), strict=True):
        _draw_measurements(axis, metric, items)
    for axis in axes[count:]:
        axis.set_visible(False)
    fig.suptitle(f"Figure {figure.number}. {figure.title}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _draw_comparison(axis: plt.Axes, item: Comparison) -> None:
    series = [
        (item.candidate_label, item.candidate, CANDIDATE_COLOUR),
        (item.baseline_label, item.baseline, BASELINE_COLOUR),
    ]
    for position, (_, samples, colour) in enumerate(series):
        spread = Spread.of(samples)
        whiskers = [[spread.median - spread.low], [spread.high - spread.median]]
        axis.bar(position, spread.median, width=0.6, color=colour, yerr=whiskers, capsize=6)
        axis.scatter([position] * len(samples), samples, color="black", s=12, zorder=3)
    axis.set_xticks(range(len(series)), [label for label, _, _ in series], fontsize=8)
    axis.set_ylabel(item.metric)
    axis.set_title(textwrap.fill(item.name, 44), fontsize=10)
    axis.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    axis.margins(y=0.2)
    verdict = _verdict(item)
    colour = {"met": MET_COLOUR, "missed": MISSED_COLOUR}.get(verdict, "black")
    target = f"\ntarget {item.target.describe()}: {verdict}" if item.target else ""
    axis.text(
        0.5,
        0.97,
        f"ratio {item.ratio:.3f}{target}",
        transform=axis.transAxes,
        ha="center",
        va="top",
        color=colour,
        fontsize=9,
    )


def measurement_groups(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    """The measurements by unit, in the order their units first appear: one chart panel each."""
    groups: dict[str, list[Measurement]] = {}
    for item in measurements:
        groups.setdefault(item.metric, []).append(item)
    return groups


def _draw_measurements(axis: plt.Axes, metric: str, items: Sequence[Measurement]) -> None:
    """Horizontal bars of the medians with min-max whiskers, every sample as a dot, and each
    limit as a dashed mark across its bar; a missed limit colours its bar red."""
    for row, item in enumerate(items):
        spread = item.spread
        whiskers = [[spread.median - spread.low], [spread.high - spread.median]]
        colour = MISSED_COLOUR if item.met is False else CANDIDATE_COLOUR
        axis.barh(row, spread.median, height=0.6, color=colour, xerr=whiskers, capsize=3)
        axis.scatter(item.samples, [row] * len(item.samples), color="black", s=8, zorder=3)
        if item.limit is not None:
            axis.vlines(item.limit.threshold, row - 0.4, row + 0.4, colors="black", linestyles="--")
    labels = [textwrap.fill(f"{item.name}, {item.label}", 32) for item in items]
    axis.set_yticks(range(len(items)), labels, fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel(metric)
    axis.set_title(metric, fontsize=10)
    axis.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    axis.margins(x=0.15)


def describe_machine(repository: Path) -> Machine:
    """The facts REPORT.md states about where and when it was measured, row by row."""
    memory_kib = int((_field("/proc/meminfo", "MemTotal") or "0").split()[0])
    load = " ".join(_read("/proc/loadavg").split()[:3]) or "unknown"
    return {
        "date (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "cores": str(os.cpu_count() or 0),
        "memory": f"{memory_kib / 1024 / 1024:.1f} GiB",
        "CPU": _field("/proc/cpuinfo", "model name") or platform.processor() or "unknown",
        "OS": f"{platform.system()} {platform.release()}",
        "Java": _java_version(),
        "Spark (pyspark)": pyspark.__version__,
        "Python": platform.python_version(),
        "load average at start (1, 5, 15 min)": load,
        SPEED_CHECK: f"{speed_check_ms():.0f} ms",
        "streamjobs commit": _commit(repository),
    }


def speed_check_ms(repetitions: int = 5) -> float:
    """The best of ``repetitions`` timings of the same loop of additions, in milliseconds."""
    best = float("inf")
    for _ in range(repetitions):
        started = time.perf_counter()
        total = 0
        for number in range(SPEED_CHECK_ADDITIONS):
            total += number
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _field(path: str, name: str) -> str | None:
    """The value of the first ``name: value`` line of a /proc file."""
    for line in _read(path).splitlines():
        if line.startswith(name):
            return line.split(":", 1)[1].strip()
    return None


def _java_version() -> str:
    try:
        shown = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    lines = shown.stderr.strip().splitlines()
    return lines[0] if lines else "unknown"


def _commit(repository: Path) -> str:
    def git(*arguments: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repository), *arguments], capture_output=True, text=True
        )
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{commit} (with uncommitted changes)" if git("status", "--porcelain") else commit


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""
