"""Sum up a Spark event log: how much time the run's jobs and tasks took, and on what.

Both subjects of a figure run with ``spark.eventLog.enabled`` and their own log directory. The log
is Spark's JSON-lines listener events (possibly split into rolled files); this module reads the
task-end and job events, to say where the processing time went: in tasks (run time, CPU time,
garbage collection) or on the driver between jobs; and the physical plan of the first streaming
micro-batch, to say what the tasks computed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NANOS_PER_SECOND = 1e9
MILLIS_PER_SECOND = 1e3
STREAM_SCAN = "MicroBatchScan"


@dataclass(frozen=True)
class TaskTime:
    """Totals over every task and job of one application."""

    jobs: int = 0
    tasks: int = 0
    job_seconds: float = 0.0
    """Wall time of the jobs, each from submission to completion, added up."""
    run_seconds: float = 0.0
    """Executor run time of the tasks (the two cores' busy time), added up."""
    cpu_seconds: float = 0.0
    gc_seconds: float = 0.0
    deserialize_seconds: float = 0.0
    batch_plan: str = ""
    """The physical plan of the first micro-batch (the first SQL execution scanning a stream)."""
    cpu_seconds_by_stage_width: Counter[int] = field(default_factory=Counter)
    """Task CPU time by the number of tasks of the stage it ran in: the micro-batch's own stage
    has one task per Kafka partition; a sink's bookkeeping (Delta's log) runs wider stages."""


def read_event_log(directory: Path) -> TaskTime:
    """Totals of every event log file under ``directory`` (one application's, rolled or not)."""
    totals = _Totals()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if path.name.startswith("."):
            continue
        with path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                totals.add(json.loads(line))
    return totals.result()


class _Totals:
    def __init__(self) -> None:
        self.tasks = 0
        self.run_ms = 0.0
        self.cpu_ns = 0.0
        self.gc_ms = 0.0
        self.deserialize_ms = 0.0
        self.job_starts: dict[int, int] = {}
        self.job_ms = 0.0
        self.jobs = 0
        self.batch_plan = ""
        self.stage_cpu_ns: Counter[int] = Counter()
        self.stage_width: dict[int, int] = {}

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("Event")
        if kind == "SparkListenerTaskEnd":
            self._task(event.get("Task Metrics") or {})
            self.stage_cpu_ns[event["Stage ID"]] += (event.get("Task Metrics") or {}).get(
                "Executor CPU Time", 0
            )
        elif kind == "SparkListenerStageCompleted":
            stage = event["Stage Info"]
            self.stage_width[stage["Stage ID"]] = stage["Number of Tasks"]
        elif kind == "SparkListenerJobStart":
            self.job_starts[event["Job ID"]] = event["Submission Time"]
        elif kind == "SparkListenerJobEnd" and event["Job ID"] in self.job_starts:
            self.jobs += 1
            self.job_ms += event["Completion Time"] - self.job_starts.pop(event["Job ID"])
        elif str(kind).endswith("SparkListenerSQLExecutionStart") and not self.batch_plan:
            plan = event.get("physicalPlanDescription", "")
            if STREAM_SCAN in plan:
                self.batch_plan = plan

    def _task(self, metrics: dict[str, Any]) -> None:
        self.tasks += 1
        self.run_ms += metrics.get("Executor Run Time", 0)
        self.cpu_ns += metrics.get("Executor CPU Time", 0)
        self.gc_ms += metrics.get("JVM GC Time", 0)
        self.deserialize_ms += metrics.get("Executor Deserialize Time", 0)

    def result(self) -> TaskTime:
        return TaskTime(
            jobs=self.jobs,
            tasks=self.tasks,
            job_seconds=self.job_ms / MILLIS_PER_SECOND,
            run_seconds=self.run_ms / MILLIS_PER_SECOND,
            cpu_seconds=self.cpu_ns / NANOS_PER_SECOND,
            gc_seconds=self.gc_ms / MILLIS_PER_SECOND,
            deserialize_seconds=self.deserialize_ms / MILLIS_PER_SECOND,
            batch_plan=self.batch_plan,
            cpu_seconds_by_stage_width=self._by_width(),
        )

    def _by_width(self) -> Counter[int]:
        widths: Counter[int] = Counter()
        for stage, nanos in self.stage_cpu_ns.items():
            widths[self.stage_width.get(stage, 0)] += nanos / NANOS_PER_SECOND
        return widths
