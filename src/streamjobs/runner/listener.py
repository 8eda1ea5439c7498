"""Spark's streaming query callbacks, turned into events for a ``Reporter``.

PySpark rebuilds every progress report from the JVM object field by field: dozens of Py4J calls,
and each map it reads ends in an exception the JVM raises and PySpark converts. On a driver with
two cores that work ran beside the next micro-batch's planning and showed in its timings. The
bridge here asks the JVM for the report's JSON instead, one call, and hands that on: it is what
the reporter sends anyway.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from py4j.java_gateway import JavaObject
from pyspark import SparkContext
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.listener import (
    JStreamingQueryListener,
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
)

from streamjobs.domain.clock import Clock
from streamjobs.domain.reports import (
    IdleReport,
    ProgressReport,
    StartedReport,
    TerminatedReport,
    progress_report,
)
from streamjobs.runner.reporting import Reporter


class ProgressFromJson(JStreamingQueryListener):
    """PySpark's Py4J bridge for a listener, with progress reports read as one JSON string.

    The other events are rare (a query's start, idleness, end) and keep PySpark's conversion."""

    pylistener: ReportingListener

    def onQueryProgress(self, jevent: JavaObject) -> None:  # noqa: N802 - Spark's name
        self.pylistener.report_progress(json.loads(jevent.progress().json()))


class ReportingListener(StreamingQueryListener):
    """Turns Spark's query callbacks into reports (``domain.reports``) for a reporter.

    ``on_progress`` is handed each progress report after it is reported (the backlog probe,
    ``runner.backlog``); it must return at once: it runs on Spark's listener thread."""

    def __init__(
        self,
        reporter: Reporter,
        *,
        clock: Clock,
        application_id: str | None = None,
        on_progress: Callable[[ProgressReport], None] | None = None,
    ) -> None:
        self._reporter = reporter
        self._clock = clock
        self._application_id = application_id
        self._on_progress = on_progress
        self._names: dict[str, str] = {}
        self._terminated: set[str] = set()
        self._termination = threading.Condition()
        self._bridge: JavaObject | None = None

    @property
    def _jlistener(self) -> JavaObject:
        """What ``spark.streams.addListener`` registers in the JVM (PySpark's own hook)."""
        if self._bridge is None:
            jvm = SparkContext._jvm
            assert jvm is not None, "a listener is added to a running session"
            self._bridge = jvm.PythonStreamingQueryListenerWrapper(ProgressFromJson(self))
        return self._bridge

    def await_terminated(self, query_ids: Iterable[str], timeout_seconds: float = 10.0) -> bool:
        """Wait until Spark has told of the end of every query in ``query_ids``.

        Spark delivers listener events asynchronously, so a query can have stopped before its
        ``terminated`` event is reported; waiting for it keeps the last event from being lost.
        """
        wanted = set(query_ids)
        with self._termination:
            return self._termination.wait_for(
                lambda: wanted <= self._terminated, timeout=timeout_seconds
            )

    def onQueryStarted(self, event: QueryStartedEvent) -> None:  # noqa: N802 - Spark's name
        self._names[str(event.id)] = event.name or str(event.id)
        self._reporter.report(
            StartedReport(**self._about(str(event.id), str(event.runId))).to_wire()
        )

    def onQueryProgress(self, event: QueryProgressEvent) -> None:  # noqa: N802
        """PySpark's own way in, which ``ProgressFromJson`` replaces."""
        self.report_progress(json.loads(event.progress.json))

    def report_progress(self, progress: dict[str, Any]) -> None:
        """A progress report as Spark's JSON has it (which leaves out NaN rates)."""
        report = progress_report(progress, **self._about(progress["id"], progress["runId"]))
        self._reporter.report(report.to_wire())
        if self._on_progress is not None:
            self._on_progress(report)

    def onQueryIdle(self, event: QueryIdleEvent) -> None:  # noqa: N802
        self._reporter.report(IdleReport(**self._about(str(event.id), str(event.runId))).to_wire())

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:  # noqa: N802
        about = self._about(str(event.id), str(event.runId))
        self._reporter.report(TerminatedReport(**about, exception=event.exception).to_wire())
        with self._termination:
            self._terminated.add(str(event.id))
            self._termination.notify_all()

    def _about(self, query_id: str, run_id: str) -> dict[str, Any]:
        """What every query report carries: when, which query and run, which application."""
        about: dict[str, Any] = {
            "timestamp": self._clock.now().isoformat(),
            "id": query_id,
            "run_id": run_id,
            "name": self._names.get(query_id, query_id),
        }
        if self._application_id:
            about["application_id"] = self._application_id
        return about
