"""When the supervisor's loop runs its next tick: at its interval, or sooner when it matters.

A tick every second would notice a dead driver up to a second late and start its next attempt up
to a second after the retry interval said; recovery time is what a restart policy is for, so the
loop also wakes up the moment a watched driver process ends, and at the time the next attempt is
due. Driver processes are watched through pidfds (Linux 5.3 and later), which work for drivers
this server started and for those it re-attached to after a restart alike; a pid that cannot be
watched (gone already, or a fake launcher's) is simply left to the next tick.
"""

from __future__ import annotations

import contextlib
import os
import selectors
from collections.abc import Iterable


class Wakeups:
    """Waits for whichever comes first: the timeout, a watched process ending, or ``wake()``.

    ``watch`` and ``wait`` are called by the loop's thread only; ``wake`` from any thread.
    """

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._wake_reader, self._wake_writer = os.pipe()
        os.set_blocking(self._wake_reader, False)
        os.set_blocking(self._wake_writer, False)
        self._selector.register(self._wake_reader, selectors.EVENT_READ)
        self._watched: dict[int, int] = {}
        """pid -> its pidfd."""

    def watch(self, pids: Iterable[int]) -> None:
        """Watch exactly these processes from now on."""
        wanted = set(pids)
        for pid in self._watched.keys() - wanted:
            self._forget(pid)
        for pid in wanted - self._watched.keys():
            try:
                descriptor = os.pidfd_open(pid)
            except OSError:  # already gone (the next tick sees it), or not a real process
                continue
            self._watched[pid] = descriptor
            self._selector.register(descriptor, selectors.EVENT_READ)

    def wait(self, timeout: float) -> None:
        """Return after ``timeout`` seconds, or as soon as a watched process has ended or
        ``wake`` was called; an ended process is no longer watched."""
        for key, _ in self._selector.select(max(0.0, timeout)):
            if key.fd == self._wake_reader:
                self._drain()
                continue
            ended = next(pid for pid, fd in self._watched.items() if fd == key.fd)
            self._forget(ended)

    def wake(self) -> None:
        """Make the current or next ``wait`` return now."""
        with contextlib.suppress(BlockingIOError):  # the pipe is full of wake-ups already
            os.write(self._wake_writer, b"\0")

    def close(self) -> None:
        for pid in list(self._watched):
            self._forget(pid)
        self._selector.close()
        os.close(self._wake_reader)
        os.close(self._wake_writer)

    @property
    def watched(self) -> frozenset[int]:
        return frozenset(self._watched)

    def _forget(self, pid: int) -> None:
        descriptor = self._watched.pop(pid)
        self._selector.unregister(descriptor)
        os.close(descriptor)

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_reader, 4096):
                pass
