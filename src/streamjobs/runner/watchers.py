"""Threads beside a pipeline's queries: the stop file, snapshot requests, and the heartbeat.

Under the server, a graceful stop is asked by creating a file (the launcher cannot signal just
the Python driver inside spark-submit's process group), which may hold the snapshot to take once
stopped; a snapshot now, by writing ``snapshot-request``; and the server learns that a driver is
alive, even while one long micro-batch runs, from heartbeats. The runner asks itself for periodic
snapshots. Each watcher only hands requests on: the thread watching the queries acts on them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from streamjobs.domain.clock import Clock
from streamjobs.domain.reports import HeartbeatReport
from streamjobs.domain.snapshots import (
    MAX_RECORD_BYTES,
    SnapshotKind,
    SnapshotRequest,
    automatic_name,
    parse_request,
)
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


LOOK_INTERVAL = 0.5
"""How often the files the server writes are looked for, in seconds."""


def watch_stop_file(
    path: Path, request_stop: Callable[[SnapshotRequest | None], None]
) -> Repeating:
    """Call ``request_stop`` once ``path`` exists, with the snapshot request it holds (None: a
    plain stop). A file that holds no request is looked at once more, so one caught while it is
    written is read whole; an empty file is a plain stop."""
    looked: list[str] = []

    def check() -> bool:
        if not path.exists():
            return True
        text = _read(path)
        request = parse_request(text)
        if request is None and looked != [text]:
            looked[:] = [text]
            return True
        request_stop(request)
        return False

    return Repeating(check, interval=LOOK_INTERVAL, name="streamjobs-stop-file").start()


def watch_snapshot_requests(path: Path, offer: Callable[[SnapshotRequest], object]) -> Repeating:
    """Offer the request in ``path`` whenever it is there (the server replaces the file whole);
    ``offer`` takes each name once."""

    def check() -> bool:
        request = parse_request(_read(path)) if path.exists() else None
        if request is not None:
            offer(request)
        return True

    return Repeating(check, interval=LOOK_INTERVAL, name="streamjobs-snapshot-requests").start()


def ask_for_periodic_snapshots(
    offer: Callable[[SnapshotRequest], object], *, clock: Clock, interval: float
) -> Repeating:
    """Offer a periodic snapshot every ``interval`` seconds, named for when it was asked."""

    def ask() -> bool:
        kind = SnapshotKind.PERIODIC
        offer(SnapshotRequest(name=automatic_name(kind, clock.now()), kind=kind))
        return True

    return Repeating(ask, interval=interval, name="streamjobs-periodic-snapshots").start()


def _read(path: Path) -> str:
    """The file's text, or nothing when it cannot be read or is too large to be a request."""
    try:
        with path.open("rb") as file:
            return file.read(MAX_RECORD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


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
