"""A launcher that starts nothing, for supervisor and API tests: the test decides what drivers do.

Each submitted attempt gets a fake driver that runs until the test ends it (``exit``), or until
``stop``/``abort``/``kill`` reach it (exit codes 0, 143 and 137, as real drivers give). It can be
told to refuse the next submissions (``refuse_submissions``), as a launcher does when
spark-submit cannot start. It records the snapshots asked of each driver (at a stop and on
demand); a test plays the runner by staging them itself. A standby's fake driver is ready once
the test says so (``make_ready``, or ``standbys_ready`` for every one at once) and records the
promotions it gets.
"""

from __future__ import annotations

import itertools
import signal
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from streamjobs.domain.snapshots import SnapshotRequest
from streamjobs.launch.base import (
    AttemptSpec,
    DriverHandle,
    DriverHealth,
    DriverState,
    LaunchFailed,
)

_SIGTERM_EXIT = 128 + signal.SIGTERM
_SIGKILL_EXIT = 128 + signal.SIGKILL


@dataclass
class FakeDriver:
    """One submitted attempt and what has happened to it."""

    attempt: AttemptSpec
    handle: DriverHandle
    exit_code: int | None = None
    running: bool = True
    calls: list[str] = field(default_factory=list)
    snapshot_requests: list[SnapshotRequest] = field(default_factory=list)
    """Every ``request_snapshot`` made of it, in order (asked again: recorded again)."""
    stop_snapshot: SnapshotRequest | None = None
    """The snapshot its (first) graceful stop asked for."""
    ready: bool = False
    """A standby that has said it is held ready."""
    promotions: list[datetime] = field(default_factory=list)
    """The ``start_at`` of every ``promote`` made of it, in order."""


class FakeLauncher:
    """Keeps fake drivers in memory; see the module docstring."""

    def __init__(self, *, standbys_ready: bool = False) -> None:
        """``standbys_ready``: every standby is ready as soon as it is submitted."""
        self.standbys_ready = standbys_ready
        self.drivers: list[FakeDriver] = []
        self._pids = itertools.count(1000)
        self._refusals: list[str] = []

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if self._refusals:
            raise LaunchFailed(self._refusals.pop(0))
        handle = DriverHandle(
            pid=next(self._pids),
            started_at=float(len(self.drivers)),
            directory=str(attempt.directory),
            ui_port=4040,
            master="local[1]",
        )
        ready = attempt.standby and self.standbys_ready
        self.drivers.append(FakeDriver(attempt=attempt, handle=handle, ready=ready))
        return handle

    def poll(self, handle: DriverHandle) -> DriverHealth:
        driver = self._driver(handle)
        if driver.running:
            return DriverHealth(DriverState.RUNNING)
        return DriverHealth(DriverState.EXITED, driver.exit_code)

    def stop(self, handle: DriverHandle, *, snapshot: SnapshotRequest | None = None) -> None:
        driver = self._driver(handle)
        if driver.running and "stop" not in driver.calls:
            driver.stop_snapshot = snapshot
        self._end(handle, "stop", 0)

    def request_snapshot(self, handle: DriverHandle, request: SnapshotRequest) -> None:
        driver = self._driver(handle)
        driver.calls.append("snapshot")
        driver.snapshot_requests.append(request)

    def promote(self, handle: DriverHandle, *, start_at: datetime) -> None:
        driver = self._driver(handle)
        driver.calls.append("promote")
        driver.promotions.append(start_at)

    def standby_ready(self, handle: DriverHandle) -> bool:
        driver = self._driver(handle)
        return driver.attempt.standby and driver.ready

    def abort(self, handle: DriverHandle) -> None:
        self._end(handle, "abort", _SIGTERM_EXIT)

    def kill(self, handle: DriverHandle) -> None:
        self._end(handle, "kill", _SIGKILL_EXIT)

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth:
        for driver in self.drivers:
            if driver.attempt.fence == fence and fence:
                return (
                    driver.handle
                    if driver.running
                    else DriverHealth(DriverState.EXITED, driver.exit_code)
                )
        return DriverHealth(DriverState.EXITED, None)

    def log_files(self, handle: DriverHandle) -> dict[str, Path]:
        path = Path(handle.directory) / "stderr.log"
        return {"driver": path} if path.exists() else {}

    # What tests do to the drivers:

    def exit(self, index: int, code: int) -> None:
        """Make driver ``index`` (in submission order; -1 the latest) exit with ``code``."""
        driver = self.drivers[index]
        driver.running, driver.exit_code = False, code

    def make_ready(self, index: int = -1) -> None:
        """Make the standby driver ``index`` (in submission order; -1 the latest) say it is
        held ready."""
        driver = self.drivers[index]
        assert driver.attempt.standby, "only a standby's driver says it is ready"
        driver.ready = True

    @property
    def standbys(self) -> list[FakeDriver]:
        """The drivers submitted as standbys, in submission order."""
        return [driver for driver in self.drivers if driver.attempt.standby]

    def refuse_submissions(self, *reasons: str) -> None:
        """Make the next ``len(reasons)`` submissions raise ``LaunchFailed`` with these reasons."""
        self._refusals.extend(reasons)

    @property
    def live(self) -> list[FakeDriver]:
        return [driver for driver in self.drivers if driver.running]

    def _end(self, handle: DriverHandle, call: str, code: int) -> None:
        driver = self._driver(handle)
        driver.calls.append(call)
        if driver.running:
            driver.running, driver.exit_code = False, code

    def _driver(self, handle: DriverHandle) -> FakeDriver:
        return next(d for d in self.drivers if d.handle.pid == handle.pid)
