"""The listener's Py4J bridge hands Spark's progress JSON on as it is, without a JVM here: a
fake event stands for the one Spark passes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from streamjobs.domain.clock import FakeClock
from streamjobs.runner.listener import ProgressFromJson, ReportingListener


class Collected:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def report(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def close(self) -> None:
        return None


class FakeProgress:
    def __init__(self, progress: dict[str, Any]) -> None:
        self._json = json.dumps(progress)

    def json(self) -> str:
        return self._json


class FakeProgressEvent:
    def __init__(self, progress: dict[str, Any]) -> None:
        self._progress = FakeProgress(progress)

    def progress(self) -> FakeProgress:
        return self._progress


def test_a_progress_without_the_rates_spark_leaves_out_when_nan_is_reported_whole() -> None:
    progress = {
        "id": "query-1",
        "runId": "run-1",
        "name": "orders",
        "batchId": 3,
        "numInputRows": 0,
        "durationMs": {"triggerExecution": 2},
        "stateOperators": [],
        "sources": [{"description": "KafkaV2[Subscribe[orders]]", "numInputRows": 0}],
        "sink": {"description": "FileSink[/out]", "numOutputRows": -1},
    }
    reporter = Collected()
    clock = FakeClock(datetime(2026, 11, 24, 12, 0, tzinfo=UTC))
    listener = ReportingListener(reporter, clock=clock, application_id="app-1")

    ProgressFromJson(listener).onQueryProgress(FakeProgressEvent(progress))

    assert reporter.events == [
        {
            "type": "progress",
            "timestamp": "2026-11-24T12:00:00+00:00",
            "id": "query-1",
            "runId": "run-1",
            "name": "query-1",
            "progress": progress,
            "applicationId": "app-1",
        }
    ]
