"""Stopping a pipeline's queries at a batch boundary, and telling how they ended.

A graceful stop and a snapshot's hold both stop each query only once its micro-batch in flight
is done, so the checkpoint and the outputs are left at a committed batch.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import timedelta

from py4j.protocol import Py4JJavaError
from pyspark.sql.streaming import StreamingQuery

from streamjobs.domain.clock import Clock


def stop_after_current_batch(
    queries: Iterable[StreamingQuery], *, clock: Clock, timeout_seconds: float = 60.0
) -> None:
    """Stop every query once its micro-batch in flight is done (or the timeout has passed)."""
    deadline = clock.now() + timedelta(seconds=timeout_seconds)
    for query in queries:
        while query.isActive and query.status["isTriggerActive"]:
            if clock.now() > deadline:
                break
            time.sleep(0.05)
        query.stop()


def failures(queries: Iterable[StreamingQuery]) -> dict[str, str]:
    """The queries among ``queries`` that ended with an error, by name, with the error."""
    return {
        query.name or str(query.id): str(query.exception())
        for query in queries
        if query.exception() is not None
    }


def error_text(error: Exception) -> str:
    """What went wrong, in one line for a Java error (not Py4J's call and the whole trace)."""
    if isinstance(error, Py4JJavaError):
        return str(error.java_exception.toString())
    return str(error)


def is_idle(query: StreamingQuery, triggered: set[StreamingQuery]) -> bool:
    """Whether the query has run a trigger and now waits for data. Whether it has a last
    progress is asked of the JVM directly (PySpark would rebuild it field by field over Py4J),
    and only until it has: ``triggered`` keeps the queries known to have run one."""
    if query not in triggered:
        if query._jsq.lastProgress() is None:
            return False
        triggered.add(query)
    status = query.status
    return not status["isDataAvailable"] and not status["isTriggerActive"]
