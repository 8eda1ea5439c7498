"""An application's executor figures as its page shows them: totals over executors, human units.

The figures are ``ExecutorFigures.to_dict()`` as the supervisor stores them: one entry per
executor, the driver's own entry (id ``driver``) included, so totals count the tasks a
``local[N]`` driver runs itself. Units are written by ``streamjobs.formatting``, the one set of
formatters of the UI and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from streamjobs import formatting

DRIVER_ID = "driver"
SUMMED = (
    "completed_tasks",
    "failed_tasks",
    "task_time_ms",
    "shuffle_read_bytes",
    "shuffle_write_bytes",
    "input_bytes",
    "gc_time_ms",
    "memory_spilled_bytes",
    "disk_spilled_bytes",
)
"""What executors did, added up over every executor, the driver and removed ones included."""
HELD = ("memory_used_bytes", "disk_used_bytes", "rdd_blocks", "total_cores")
"""What executors hold now, added up over the active ones: a removed executor holds nothing."""


class Unit(StrEnum):
    """How a figure is written for people."""

    COUNT = "count"
    BYTES = "bytes"
    MILLISECONDS = "ms"


@dataclass(frozen=True)
class MetricCard:
    """One figure of the Details tab: its key in ``executor_totals``, its label and unit."""

    key: str
    label: str
    unit: Unit


MAIN_CARDS = (
    MetricCard("completed_tasks", "Completed tasks", Unit.COUNT),
    MetricCard("failed_tasks", "Failed tasks", Unit.COUNT),
    MetricCard("task_time_ms", "Task time", Unit.MILLISECONDS),
    MetricCard("shuffle_read_bytes", "Shuffle read", Unit.BYTES),
    MetricCard("shuffle_write_bytes", "Shuffle write", Unit.BYTES),
    MetricCard("memory_used_bytes", "Memory used", Unit.BYTES),
    MetricCard("disk_used_bytes", "Disk used", Unit.BYTES),
)
MORE_CARDS = (
    MetricCard("driver_task_time_ms", "Driver task time", Unit.MILLISECONDS),
    MetricCard("input_bytes", "Input bytes", Unit.BYTES),
    MetricCard("rdd_blocks", "RDD blocks", Unit.COUNT),
    MetricCard("gc_time_ms", "GC time", Unit.MILLISECONDS),
    MetricCard("total_cores", "Total cores", Unit.COUNT),
    MetricCard("spilled_bytes", "Bytes spilled", Unit.BYTES),
)


def executor_totals(figures: Mapping[str, Any] | None) -> dict[str, int] | None:
    """Each card's figure summed over the executors; None before any figures were read.

    What executors hold (``HELD``: memory, disk, blocks, cores) counts active executors only
    (a removed or lost executor's are gone), what they did counts them all;
    ``spilled_bytes`` is what was spilled to disk (Spark's disk and memory spill sizes measure
    the same spilled data, serialized and not, so they are not added).
    """
    if not figures:
        return None
    executors: Sequence[Mapping[str, Any]] = figures.get("executors") or ()
    totals = {field: sum(_count(executor, field) for executor in executors) for field in SUMMED}
    totals["driver_task_time_ms"] = sum(
        _count(executor, "task_time_ms")
        for executor in executors
        if executor.get("id") == DRIVER_ID
    )
    active = [executor for executor in executors if executor.get("is_active")]
    totals.update({field: sum(_count(executor, field) for executor in active) for field in HELD})
    totals["spilled_bytes"] = totals["disk_spilled_bytes"]
    return totals


def human(value: int | float | None, unit: Unit) -> str:
    """``value`` in ``unit`` for people; ``UNKNOWN`` when there is none."""
    if unit is Unit.BYTES:
        return formatting.size(value)
    if unit is Unit.MILLISECONDS:
        return formatting.milliseconds(value)
    return formatting.count(value)


def _count(executor: Mapping[str, Any], field: str) -> int:
    value = executor.get(field)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
