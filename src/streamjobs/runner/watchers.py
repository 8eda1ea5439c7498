"""Two threads beside a pipeline's queries: the stop file and the heartbeat.

Under the server, a graceful stop is asked by creating a file (the launcher cannot signal just
the Python driver inside spark-submit's process group), and the server learns that a driver is
alive, even while one long micro-batch runs, from heartbeats.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from streamjobs.domain.clock import Clock
from streamjobs.domain.reports import HeartbeatReport
from streamjobs.runner.reporting import Reporter


class Repeating:
    """Calls ``action`` every ``interval`` seconds in a daemon thread until it says stop or
    ``cancel`` is called."""

    def __init__(self, action: Callable[[], bool], *, interval: float, name: str) -> None:
        self._action = action
        self._interval = interval
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> Repeating:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancelled.set()

    def _loop(self) -> None:
        while not self._cancelled.wait(self._interval):
            if not self._action():
                return


def watch_stop_file(path: Path, request_stop: Callable[[], None]) -> Repeating:
    """Call ``request_stop`` once ``path`` exists (checked twice a second)."""

    def check() -> bool:
        if path.exists():
            request_stop()
            return False
        return True

    return Repeating(check, interval=0.5, name="streamjobs-stop-file").start()


def send_heartbeats(
    reporter: Reporter, *, clock: Clock, application_id: str | None, interval: float
) -> Repeating:
    """Report ``{"type": "heartbeat"}`` every ``interval`` seconds."""

    def beat() -> bool:
        beat = HeartbeatReport(timestamp=clock.now().isoformat())
        about = {"applicationId": application_id} if application_id else {}
        reporter.report({**beat.to_wire(), **about})
        return True

    return Repeating(beat, interval=interval, name="streamjobs-heartbeat").start()
