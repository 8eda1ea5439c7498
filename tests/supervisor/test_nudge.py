"""A Run (stop, abort, resume) wakes the supervisor's loop at once, and so does the first report
of a starting driver; other requests and later reports leave it to its next tick.

The loop runs with an interval of an hour: anything it does within a test was woken. Nothing
here measures how soon.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import pytest

from streamjobs.domain.states import AppState
from streamjobs.supervisor.loop import Supervisor
from streamjobs.supervisor.nudge import Message, Receive, Scope, Send, nudging
from tests.event_loops import run_apart
from tests.supervisor.conftest import ALICE, World

HOUR = 3600.0


class Recorder:
    """Stands in for the supervisor: records what the middleware calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def wake(self) -> None:
        self.calls.append("wake")

    def driver_reported(self, application_id: str) -> None:
        self.calls.append(f"reported {application_id}")


def answered(status: int):  # type: ignore[no-untyped-def]
    """An ASGI application that answers every request with ``status``."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return app


def request(method: str, path: str, status: int) -> list[str]:
    """What the middleware called after ``method path`` answered ``status``."""
    recorder = Recorder()
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path}
    run_apart(nudging(answered(status), recorder)(scope, receive, send))
    assert sent[0]["status"] == status  # the answer itself is untouched
    return recorder.calls


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/api/v1/jobs/ticks/run", 201),
        ("POST", "/api/v1/jobs/ticks/stop", 202),
        ("POST", "/api/v1/jobs/ticks/resume", 202),
        ("POST", "/api/v1/applications/app-1/abort", 202),
        ("POST", "/jobs/ticks/run", 303),
        ("POST", "/applications/app-1/abort", 303),
    ],
)
def test_requests_to_run_stop_resume_or_abort_wake_the_loop(
    method: str, path: str, status: int
) -> None:
    assert request(method, path, status) == ["wake"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/api/v1/jobs/ticks/run", 409),
        ("POST", "/api/v1/jobs/ticks/run", 404),
        ("GET", "/api/v1/jobs/ticks", 200),
        ("PUT", "/api/v1/jobs/ticks", 200),
        ("POST", "/api/v1/jobs/ticks/duplicate", 201),
        ("POST", "/jobs/ticks/delete", 303),
    ],
)
def test_failed_and_unrelated_requests_do_not(method: str, path: str, status: int) -> None:
    assert request(method, path, status) == []


def test_a_report_names_its_application_and_a_refused_one_nothing() -> None:
    assert request("POST", "/api/v1/applications/app-1/reports", 200) == ["reported app-1"]
    assert request("POST", "/api/v1/applications/app-1/reports", 401) == []


def test_lifespan_passes_through() -> None:
    recorder = Recorder()
    seen: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)

    async def nothing() -> Message:
        return {}

    async def ignore(message: Message) -> None:
        return None

    run_apart(nudging(app, recorder)({"type": "lifespan"}, nothing, ignore))
    assert len(seen) == 1
    assert recorder.calls == []


class Ticks:
    """Counts the loop's ticks; ``wait_for(n)`` returns once there were ``n``."""

    def __init__(self, supervisor: Supervisor) -> None:
        self.count = 0
        self._changed = threading.Condition()
        run_once = supervisor.run_once

        def counted():  # type: ignore[no-untyped-def]
            actions = run_once()
            with self._changed:
                self.count += 1
                self._changed.notify_all()
            return actions

        supervisor.run_once = counted  # type: ignore[method-assign]

    def wait_for(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: self.count >= count, timeout=60)


@pytest.fixture
def looping(world: World) -> Iterator[tuple[World, Ticks]]:
    """The world's supervisor running its loop in its thread, an hour between ticks."""
    config = world.supervisor._config
    world.supervisor._config = dataclasses.replace(config, interval_seconds=HOUR)
    ticks = Ticks(world.supervisor)
    world.supervisor.start()
    yield world, ticks
    world.supervisor.stop()


@pytest.mark.timeout(120)
def test_a_run_woken_loop_submits_without_waiting_for_its_interval(
    looping: tuple[World, Ticks],
) -> None:
    world, ticks = looping
    name = world.create_job()
    application = world.services.applications.run(name, actor=ALICE)
    world.supervisor.wake()
    ticks.wait_for(1)
    assert len(world.launcher.drivers) == 1
    assert world.app(application.id).state is AppState.STARTING


class CountingWakeups:
    def __init__(self) -> None:
        self.woken = 0

    def wake(self) -> None:
        self.woken += 1


def test_only_a_starting_drivers_report_wakes_the_loop(world: World) -> None:
    wakeups = CountingWakeups()
    world.supervisor._wakeups = wakeups  # type: ignore[assignment]
    name = world.create_job()
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    assert len(world.launcher.drivers) == 1
    world.supervisor.driver_reported("app-of-another-job")
    assert wakeups.woken == 0
    world.report(application.id, {"type": "driver", "sparkApplicationId": "local-1"})
    world.supervisor.driver_reported(application.id)
    assert wakeups.woken == 1
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    world.report(application.id, {"type": "heartbeat"})
    world.supervisor.driver_reported(application.id)
    assert wakeups.woken == 1  # progress and heartbeats of a running driver wait for a tick
