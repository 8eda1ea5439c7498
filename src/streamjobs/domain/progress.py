"""The figures a person wants from a query's progress report, as Spark's progress JSON gives it.

Spark reports each micro-batch as a ``StreamingQueryProgress`` JSON object; this picks out what
the job list and the application page show: rows per second in and processed, the batch's
duration and id, the watermark, rows held in state and how far the Kafka sources are behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FIGURE_NAMES = (
    "inputRowsPerSecond",
    "processedRowsPerSecond",
    "batchDurationMs",
    "batchId",
    "numInputRows",
    "watermark",
    "stateRows",
    "offsetsBehindLatest",
)
SUMMED = ("inputRowsPerSecond", "processedRowsPerSecond", "numInputRows", "stateRows")
"""Figures that add up over an application's queries (one query per output)."""


def figures_of(progress: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of one progress report."""
    behind = [
        metrics["maxOffsetsBehindLatest"]
        for source in progress.get("sources") or []
        for metrics in [source.get("metrics") or {}]
        if metrics.get("maxOffsetsBehindLatest") is not None
    ]
    return {
        "inputRowsPerSecond": _number(progress.get("inputRowsPerSecond")),
        "processedRowsPerSecond": _number(progress.get("processedRowsPerSecond")),
        "batchDurationMs": (progress.get("durationMs") or {}).get("triggerExecution"),
        "batchId": progress.get("batchId"),
        "numInputRows": progress.get("numInputRows"),
        "watermark": (progress.get("eventTime") or {}).get("watermark"),
        "stateRows": sum(
            operator.get("numRowsTotal") or 0 for operator in progress.get("stateOperators") or []
        ),
        "offsetsBehindLatest": sum(int(value) for value in behind) if behind else None,
    }


def application_figures(per_query: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """An application's figures from its queries' latest: summed rates, the slowest batch."""
    queries = list(per_query.values())
    figures: dict[str, Any] = {name: _sum(q.get(name) for q in queries) for name in SUMMED}
    figures["batchDurationMs"] = _max(q.get("batchDurationMs") for q in queries)
    figures["batchId"] = _max(q.get("batchId") for q in queries)
    figures["offsetsBehindLatest"] = _sum(q.get("offsetsBehindLatest") for q in queries)
    watermarks = [q["watermark"] for q in queries if q.get("watermark")]
    figures["watermark"] = min(watermarks) if watermarks else None
    return figures


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and value == value:  # NaN is not a figure
        return float(value)
    return None


def _sum(values: Iterable[Any]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _max(values: Iterable[Any]) -> Any:
    present = [value for value in values if value is not None]
    return max(present) if present else None
