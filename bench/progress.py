"""What a Spark query run reported: its progress reports, which time the processing they
describe, and its event log, whose task CPU time figure 1 divides records by (less sensitive than
wall time to a busy machine)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any


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


def runner_events(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects among a subject's stdout lines (the runner's events), others skipped."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


def processing_window(stdout: Path) -> ProcessingWindow:
    """The window the progress reports among a subject's stdout lines cover; ValueError when
    there are none."""
    events = runner_events(stdout)
    reports = [event["progress"] for event in events if event.get("type") == "progress"]
    if not reports:
        raise ValueError("no progress reports: the query ran no micro-batch")
    starts = [
        datetime.fromisoformat(report["timestamp"].replace("Z", "+00:00")) for report in reports
    ]
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


def task_cpu_seconds(event_log: Path) -> float:
    """Executor CPU time of every task in the event log files under ``event_log``."""
    nanos = 0
    for path in sorted(p for p in event_log.rglob("*") if p.is_file()):
        if path.name.startswith("."):
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerTaskEnd":
                nanos += (event.get("Task Metrics") or {}).get("Executor CPU Time", 0)
    return nanos / 1e9
