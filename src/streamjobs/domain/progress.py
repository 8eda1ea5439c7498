"""The figures a person (and a health rule) wants from a query's progress reports.

Spark reports each micro-batch as a ``StreamingQueryProgress`` (``domain.reports.QueryProgress``);
this picks out what the job list, the application page, ``/metrics`` and the health rules read:
rows per second in and processed, the batch's duration and id, the watermark, rows and bytes held
in state, how far the Kafka sources are behind (in records, and in seconds from the runner's
``backlog`` reports), when a batch last committed and last had input.

Records behind are counted from the offsets Spark reports per partition: ``latestOffset`` (the
newest the broker had when the batch was planned) minus ``endOffset`` (the next to process).
``offsetsBehindLatest`` is Spark's own ``maxOffsetsBehindLatest`` metric, kept for its readers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from streamjobs.domain.reports import BacklogReport, QueryProgress

FIGURE_NAMES = (
    "inputRowsPerSecond",
    "processedRowsPerSecond",
    "batchDurationMs",
    "batchId",
    "numInputRows",
    "watermark",
    "stateRows",
    "stateMemoryBytes",
    "offsetsBehindLatest",
    "recordsBehind",
    "maxPartitionRecordsBehind",
    "secondsBehind",
    "inputAvailable",
    "lastCommittedAt",
    "lastInputAt",
)
SUMMED = (
    "inputRowsPerSecond",
    "processedRowsPerSecond",
    "numInputRows",
    "stateRows",
    "stateMemoryBytes",
    "offsetsBehindLatest",
    "recordsBehind",
)
"""Figures that add up over an application's queries (one query per output)."""
HIGHEST = ("batchDurationMs", "batchId", "maxPartitionRecordsBehind", "secondsBehind")
LATEST_TIMES = ("lastCommittedAt", "lastInputAt")


def figures_of(
    progress: QueryProgress | Mapping[str, Any], previous: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The figures of one progress report. ``previous`` (the query's figures before it) lends
    what this report cannot tell: when a batch last committed or had input, and the seconds
    behind of the runner's last ``backlog`` report while records are still behind."""
    if not isinstance(progress, QueryProgress):
        progress = QueryProgress.model_validate(progress)
    previous = previous or {}
    behind = kafka_records_behind(progress)
    committed_at = committed_time(progress)
    ran_with_input = committed_at is not None and (progress.num_input_rows or 0) > 0
    records_behind = sum(behind.values()) if behind is not None else None
    return {
        "inputRowsPerSecond": _number(progress.input_rows_per_second),
        "processedRowsPerSecond": _number(progress.processed_rows_per_second),
        "batchDurationMs": (progress.duration_ms or {}).get("triggerExecution"),
        "batchId": progress.batch_id,
        "numInputRows": progress.num_input_rows,
        "watermark": progress.event_time.watermark if progress.event_time else None,
        "stateRows": sum(op.num_rows_total or 0 for op in progress.state_operators or []),
        "stateMemoryBytes": sum(op.memory_used_bytes or 0 for op in progress.state_operators or []),
        "offsetsBehindLatest": _sparks_offsets_behind(progress),
        "recordsBehind": records_behind,
        "maxPartitionRecordsBehind": max(behind.values(), default=0)
        if behind is not None
        else None,
        "secondsBehind": _seconds_behind(records_behind, previous),
        "inputAvailable": input_available(progress),
        "lastCommittedAt": committed_at or previous.get("lastCommittedAt"),
        "lastInputAt": committed_at if ran_with_input else previous.get("lastInputAt"),
    }


def with_backlog(figures: Mapping[str, Any], backlog: BacklogReport) -> dict[str, Any]:
    """A query's figures with the runner's ``backlog`` report taken in, unless a newer progress
    report came first (the backlog of an older batch says nothing of the current one)."""
    batch = figures.get("batchId")
    if isinstance(batch, int) and backlog.batch_id < batch:
        return dict(figures)
    if figures.get("recordsBehind") == 0:
        return dict(figures)
    return {**figures, "secondsBehind": backlog.seconds_behind}


def application_figures(per_query: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """An application's figures from its queries' latest: summed rates, records behind and
    state; the slowest batch, the furthest behind; the latest commit and input; the earliest
    watermark; input available if any query has some."""
    queries = list(per_query.values())
    figures: dict[str, Any] = {name: _sum(q.get(name) for q in queries) for name in SUMMED}
    for name in HIGHEST:
        figures[name] = _max(q.get(name) for q in queries)
    for name in LATEST_TIMES:
        figures[name] = _latest_time(q.get(name) for q in queries)
    watermarks = [q["watermark"] for q in queries if q.get("watermark")]
    figures["watermark"] = min(watermarks) if watermarks else None
    available = [q["inputAvailable"] for q in queries if q.get("inputAvailable") is not None]
    figures["inputAvailable"] = any(available) if available else None
    return figures


def kafka_records_behind(progress: QueryProgress) -> dict[tuple[str, int], int] | None:
    """Records behind the latest offset of each partition of the query's Kafka sources (summed
    over sources reading the same partition); None when the query has no Kafka source whose
    offsets Spark reported."""
    behind: dict[tuple[str, int], int] | None = None
    for source in progress.sources or []:
        end, latest = source.kafka_end_offsets(), source.kafka_latest_offsets()
        if end is None or latest is None:
            continue
        behind = behind if behind is not None else {}
        for partition, newest in latest.items():
            lag = max(0, newest - end.get(partition, newest))
            behind[partition] = behind.get(partition, 0) + lag
    return behind


def input_available(progress: QueryProgress) -> bool | None:
    """Whether any source has records the query has not processed yet; None if no source says
    (a source that reports no latest offset, as file sources do)."""
    answers = []
    for source in progress.sources or []:
        if source.end_offset is None or source.latest_offset is None:
            continue
        end, latest = source.kafka_end_offsets(), source.kafka_latest_offsets()
        if end is not None and latest is not None:
            answers.append(any(newest > end.get(p, newest) for p, newest in latest.items()))
        else:
            answers.append(source.end_offset != source.latest_offset)
    return any(answers) if answers else None


def committed_time(progress: QueryProgress) -> str | None:
    """When the report's micro-batch committed (ISO 8601, UTC): its start plus its duration;
    None for a trigger that ran no batch (Spark's reports while a query waits for data)."""
    durations = progress.duration_ms or {}
    started = reported_time(progress.timestamp)
    if started is None or "addBatch" not in durations:
        return None
    took = timedelta(milliseconds=durations.get("triggerExecution") or 0)
    return (started + took).isoformat()


def reported_time(value: Any) -> datetime | None:
    """An ISO 8601 time (UTC when it names no zone, as Spark's ``...Z`` does), or None."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def _sparks_offsets_behind(progress: QueryProgress) -> int | None:
    behind = [
        (source.metrics or {}).get("maxOffsetsBehindLatest") for source in progress.sources or []
    ]
    present = [int(float(value)) for value in behind if value is not None]
    return sum(present) if present else None


def _seconds_behind(records_behind: int | None, previous: Mapping[str, Any]) -> float | None:
    if records_behind is None:
        return None
    if records_behind == 0:
        return 0.0
    last = previous.get("secondsBehind")
    return last if last else None


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and value == value:  # NaN is not a figure
        return float(value)
    return None


def _sum(values: Iterable[Any]) -> Any:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _max(values: Iterable[Any]) -> Any:
    present = [value for value in values if value is not None]
    return max(present) if present else None


def _latest_time(values: Iterable[Any]) -> str | None:
    times = [(moment, value) for value in values if (moment := reported_time(value)) is not None]
    return max(times)[1] if times else None
