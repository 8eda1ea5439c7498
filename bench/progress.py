"""Read Structured Streaming progress reports and time the processing they describe."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

Progress = dict[str, Any]


@dataclass(frozen=True)
class ProcessingWindow:
    """The micro-batches of one query run, from the first one's start to the last one's end."""

    start: datetime
    end: datetime
    records: int
    batches: int
    first_batch_seconds: float = 0.0
    phases_ms: Counter[str] = field(default_factory=Counter)

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


def read_progress(path: Path, query_name: str | None = None) -> list[Progress]:
    """The progress reports in a JSON-lines file (of one query, when named), other lines skipped."""
    reports = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        event = _json_object(line)
        if event is None or event.get("type") != "progress":
            continue
        progress = event["progress"]
        if query_name is None or progress.get("name") == query_name:
            reports.append(progress)
    return reports


def processing_window(reports: list[Progress]) -> ProcessingWindow:
    """The window the reports cover; ValueError when there are none."""
    if not reports:
        raise ValueError("no progress reports: the query ran no micro-batch")
    starts = [_parse_time(report["timestamp"]) for report in reports]
    ends = [
        start + timedelta(milliseconds=report["durationMs"].get("triggerExecution", 0))
        for start, report in zip(starts, reports, strict=True)
    ]
    phases: Counter[str] = Counter()
    for report in reports:
        phases.update(report["durationMs"])
    first = starts.index(min(starts))
    return ProcessingWindow(
        start=starts[first],
        end=max(ends),
        records=sum(int(report.get("numInputRows", 0)) for report in reports),
        batches=len(reports),
        first_batch_seconds=(ends[first] - starts[first]).total_seconds(),
        phases_ms=phases,
    )


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _json_object(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
