"""The loop's waits end when a watched driver process ends or someone wakes it, not only at the
timeout (each test waits far longer than pytest's timeout would allow, so a wait that does not
end early fails the test instead of passing slowly)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from streamjobs.supervisor.wakeups import Wakeups

LONG = 3600.0


@pytest.fixture
def wakeups() -> Iterator[Wakeups]:
    waiter = Wakeups()
    yield waiter
    waiter.close()


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.timeout(60)
def test_a_watched_process_that_ends_ends_the_wait(
    wakeups: Wakeups, sleeper: subprocess.Popen[bytes]
) -> None:
    wakeups.watch([sleeper.pid])
    assert wakeups.watched == {sleeper.pid}
    sleeper.kill()
    wakeups.wait(LONG)
    assert wakeups.watched == set()


@pytest.mark.timeout(60)
def test_wake_from_another_thread_ends_the_wait(wakeups: Wakeups) -> None:
    threading.Timer(0.1, wakeups.wake).start()
    wakeups.wait(LONG)


@pytest.mark.timeout(60)
def test_a_wake_before_the_wait_is_not_lost(wakeups: Wakeups) -> None:
    wakeups.wake()
    wakeups.wake()
    wakeups.wait(LONG)


def test_watching_replaces_the_set_and_skips_what_cannot_be_watched(
    wakeups: Wakeups, sleeper: subprocess.Popen[bytes]
) -> None:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    wakeups.watch([sleeper.pid, finished.pid, 2**22 + 7])
    assert wakeups.watched == {sleeper.pid}
    wakeups.watch([])
    assert wakeups.watched == set()


def test_without_anything_to_wake_it_the_wait_times_out(
    wakeups: Wakeups, sleeper: subprocess.Popen[bytes]
) -> None:
    wakeups.watch([sleeper.pid])
    wakeups.wait(0.05)
    assert wakeups.watched == {sleeper.pid}
