"""A server stopped at any step of a submission leaves one driver at most: the next server's
first tick adopts the driver it finds by the attempt's fence, or ends the attempt as a failed
submission and starts the next one. (With the fake launcher; tests/e2e/test_crashed_submissions.py
does it with real drivers.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.states import AppState
from streamjobs.launch.base import AttemptSpec, DriverHandle
from streamjobs.launch.fake import FakeLauncher
from streamjobs.store import ApplicationRecord
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from tests.supervisor.conftest import ALICE, World

RETRY_SUBMISSION_AT_ONCE = {
    "type": "OnFailure",
    "onSubmissionFailureRetries": 1,
    "onSubmissionFailureRetryInterval": 1,
}


class ServerStopped(BaseException):
    """The server process dies here: nothing after this point of the submission happens."""


class StoppingFactory(AttemptFactory):
    """Dies as the attempt is about to be recorded."""

    def directory_for(self, application: ApplicationRecord, number: int) -> Path:
        raise ServerStopped


class StoppingLauncher(FakeLauncher):
    """Dies just before starting the driver, or just after (``after_start``)."""

    def __init__(self, real: FakeLauncher, *, after_start: bool) -> None:
        super().__init__()
        self.real = real
        self.after_start = after_start

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if self.after_start:
            self.real.submit(attempt)
        raise ServerStopped


def first_server(world: World, step: str) -> Supervisor:
    """A supervisor over the world's store that dies at ``step`` of its first submission."""
    attempts_type = StoppingFactory if step == "before-record" else AttemptFactory
    launcher = (
        StoppingLauncher(world.launcher, after_start=step == "after-start")
        if step != "before-record"
        else world.launcher
    )
    settings = world.services.settings
    return Supervisor(
        store=world.services.store,
        launchers=dict.fromkeys(world.services.launchers, launcher),
        attempts=attempts_type(
            store=world.services.store,
            apps_directory=settings.apps_directory,
            public_url="http://127.0.0.1:1",
            secrets=world.services.secrets,
        ),
        clock=world.clock,
        config=SupervisorConfig(timing=Timing(heartbeat_timeout=60)),
        executor_reader=lambda handle: None,
    )


@pytest.mark.parametrize("step", ["before-record", "before-start", "after-start"])
def test_a_server_stopped_during_a_submission_leaves_exactly_one_driver(
    world: World, step: str
) -> None:
    job = world.create_job(restartPolicy=RETRY_SUBMISSION_AT_ONCE)
    application = world.services.applications.run(job, actor=ALICE)
    with pytest.raises(ServerStopped):
        first_server(world, step).run_once()

    for _ in range(3):  # the next server, over the same store and machine
        world.tick(1)

    live = world.launcher.live
    assert len(live) == 1
    with world.services.store.reading() as repos:
        attempts = repos.applications.attempts(application.id)
    assert attempts[-1].pid == live[0].handle.pid
    assert [a.ended_at is None for a in attempts] == [False] * (len(attempts) - 1) + [True]
    current = world.app(application.id)
    assert current.state is AppState.STARTING
    kinds = [e.kind for e in world.services.applications.events(application.id, actor=ALICE)]
    if step == "before-record":
        assert len(attempts) == 1
    elif step == "before-start":
        assert len(attempts) == 2
        assert attempts[0].pid is None
        assert "submission-failed" in kinds
        assert current.submission_failures == 1
        assert "never ran" in next(
            e.message
            for e in world.services.applications.events(application.id, actor=ALICE)
            if e.kind == "submission-failed"
        )
    else:
        assert len(attempts) == 1
        assert "driver-recovered" in kinds
        assert current.submission_failures == 0

    world.report(application.id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    assert len(world.launcher.live) == 1
