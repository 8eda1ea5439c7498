"""Where the runner's query events go: the server over HTTP, standard output, or a person.

``runner.listener`` turns Spark's callbacks into plain event dicts and hands them to a
``Reporter``. The HTTP reporter posts from a background thread with a bounded buffer that drops
the oldest events first, so a server that is away never slows or stops the job.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import IO, Any, Protocol

from streamjobs.domain.progress import figures_of
from streamjobs.domain.reports import (
    BacklogReport,
    BadRecordsReport,
    PlanReport,
    ProgressReport,
    WrittenReport,
    stored_report,
)

Event = dict[str, Any]


class Reporter(Protocol):
    """Receives the runner's events.

    Contract: ``report`` returns at once and never raises (it is called on Spark's listener
    thread); an event is a JSON-serialisable dict with at least ``type`` and ``timestamp``.
    ``close`` delivers what it still can within a short time and releases resources.
    """

    def report(self, event: Event) -> None: ...

    def close(self) -> None: ...


class JsonLinesReporter:
    """One JSON object per line on a stream (standard output by default)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stdout
        self._lock = threading.Lock()

    def report(self, event: Event) -> None:
        with self._lock:
            self._stream.write(json.dumps(event, default=str) + "\n")
            self._stream.flush()

    def close(self) -> None:
        self._stream.flush()


class HttpReporter:
    """Posts events as JSON batches to the server, from a background thread, buffered and bounded.

    ``url`` receives ``POST {"events": [...]}`` with ``Authorization: Bearer <token>``. When the
    server is away, events wait in the buffer (oldest dropped past ``capacity``) and are retried
    with a growing pause. Each event carries a ``sequence`` number, counted from 0 by this
    reporter, so the server can ignore a batch it receives twice (a post whose answer was lost).
    A batch is never larger than ``max_body_bytes`` when encoded (unless it is one event): the
    server refuses bodies past its limit, 1 MiB by default, and may cut the connection before a
    client has sent them whole. A batch it refuses for its size (413) all the same is sent again in
    halves; a single event it refuses is dropped (counted in ``dropped``), never retried for ever.
    A batch refused as unreadable (422: an event that is no report, ``domain.reports``) goes the
    same way, so one bad event is dropped and the others are delivered.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        capacity: int = 1000,
        batch_size: int = 100,
        timeout: float = 5.0,
        max_pause: float = 10.0,
        max_body_bytes: int = 512 * 1024,
    ) -> None:
        self._url = url
        self._token = token
        self._buffer: deque[Event] = deque(maxlen=capacity)
        self._next_sequence = 0
        self._batch_size = batch_size
        self._timeout = timeout
        self._max_pause = max_pause
        self._max_body_bytes = max_body_bytes
        self._wake = threading.Condition()
        self._closing = False
        self.dropped = 0
        self._thread = threading.Thread(
            target=self._deliver, name="streamjobs-reporter", daemon=True
        )
        self._thread.start()

    def report(self, event: Event) -> None:
        with self._wake:
            if len(self._buffer) == self._buffer.maxlen:
                self.dropped += 1
            self._buffer.append({**event, "sequence": self._next_sequence})
            self._next_sequence += 1
            self._wake.notify()

    def close(self, deadline_seconds: float = 5.0) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout=deadline_seconds)

    def _deliver(self) -> None:
        pause, batch_size = 0.0, self._batch_size
        while True:
            with self._wake:
                while not self._buffer and not self._closing:
                    self._wake.wait()
                if not self._buffer:
                    return
                size = min(batch_size, len(self._buffer))
                batch = [self._buffer[i] for i in range(size)]
            body = json.dumps({"events": batch}, default=str).encode()
            if len(body) > self._max_body_bytes and len(batch) > 1:
                batch_size = len(batch) // 2
                continue
            answer = self._post(body)
            if answer is _Answer.TOO_LARGE and len(batch) > 1:
                batch_size = len(batch) // 2
                continue
            if answer is not _Answer.REFUSED:
                with self._wake:
                    # Events dropped while posting moved the buffer on: remove by sequence.
                    posted = batch[-1]["sequence"]
                    while self._buffer and self._buffer[0]["sequence"] <= posted:
                        self._buffer.popleft()
                    if answer is _Answer.TOO_LARGE:
                        self.dropped += 1
                pause, batch_size = 0.0, self._batch_size
                continue
            if self._closing:
                return
            pause = min(self._max_pause, max(0.5, pause * 2))
            time.sleep(pause)

    def _post(self, body: bytes) -> _Answer:
        request = urllib.request.Request(
            self._url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return _Answer.STORED if 200 <= response.status < 300 else _Answer.REFUSED
        except urllib.error.HTTPError as error:
            return _Answer.TOO_LARGE if error.code in (413, 422) else _Answer.REFUSED
        except (urllib.error.URLError, OSError, ValueError):
            return _Answer.REFUSED


class _Answer(Enum):
    """What became of a posted batch."""

    STORED = "stored"
    TOO_LARGE = "too large"
    """The server refused the batch for its size (413) or for an event it cannot read (422):
    smaller batches may pass, and a single event refused so never will."""
    REFUSED = "refused"
    """No answer, or another refusal: the same batch is posted again after a pause."""


class ProgressPrinter:
    """Human progress lines for ``streamjobs pipeline run``: one per micro-batch, and the end."""

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        self._write = write or (lambda line: print(line, flush=True))

    def report(self, event: Event) -> None:
        self._write(progress_line(event))

    def close(self) -> None:
        return None


def progress_line(event: Event) -> str:
    """One line a person can read for an event."""
    report = stored_report(event)
    name = event.get("name") or event.get("id", "")
    if isinstance(report, PlanReport):
        return f"[{name}] plan of output {report.output}:\n{report.plan}"
    if isinstance(report, BadRecordsReport):
        return f"[{name}] {report.count} bad records from input {report.input}"
    if isinstance(report, WrittenReport):
        return f"[{name}] output {report.output} written to {report.where}"
    if isinstance(report, BacklogReport):
        age = "unknown" if report.seconds_behind is None else f"{report.seconds_behind:.1f} s"
        return f"[{name}] batch {report.batch_id}, oldest unprocessed record {age} old"
    if not isinstance(report, ProgressReport):
        detail = f": {event['exception']}" if event.get("exception") else ""
        return f"[{name}] query {event['type']}{detail}"
    progress = report.progress
    figures = figures_of(progress)
    parts = [
        f"[{name}] batch {progress.batch_id}",
        f"rows {progress.num_input_rows or 0}",
        f"in {figures['inputRowsPerSecond'] or 0.0:.1f}/s",
        f"processed {figures['processedRowsPerSecond'] or 0.0:.1f}/s",
        f"took {figures['batchDurationMs'] or 0} ms",
    ]
    if figures["recordsBehind"] is not None:
        parts.append(f"records behind {figures['recordsBehind']}")
    elif figures["offsetsBehindLatest"] is not None:
        parts.append(f"offsets behind {figures['offsetsBehindLatest']}")
    for metrics in (progress.observed_metrics or {}).values():
        parts.extend(f"{key} {value}" for key, value in metrics.items())
    return ", ".join(parts)
