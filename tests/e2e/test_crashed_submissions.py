"""A server stopped at each step of a submission, with real drivers: afterwards exactly one
driver runs for the one application, and the checkpoint it writes stays whole.

The first server dies (``ServerStopped``, which nothing in the server catches) while recording
the attempt, between recording it and starting its driver, or right after starting it; the next
server, over the same store and machine, ticks until the rate -> parquet pipeline commits
batches, then stops it gracefully.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.states import TERMINAL_STATES, AppState
from streamjobs.launch.base import AttemptSpec, DriverHandle, DriverHealth, Launcher
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings
from streamjobs.store import ApplicationRecord
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from tests.e2e.test_applications import drivers_of, rate_job
from tests.live_server import live_server

pytestmark = pytest.mark.spark
ADMIN = Actor(Principal("admin", is_admin=True))
WAIT_SECONDS = 120.0


class ServerStopped(BaseException):
    """The server process dies here: nothing after this point of the submission happens."""


class StoppingFactory(AttemptFactory):
    """Dies as the attempt is about to be recorded."""

    def directory_for(self, application: ApplicationRecord, number: int) -> Path:
        raise ServerStopped


class StoppingLauncher:
    """A real launcher that dies just before starting a driver, or just after."""

    def __init__(self, real: Launcher, *, after_start: bool) -> None:
        self.real = real
        self.after_start = after_start

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if self.after_start:
            self.real.submit(attempt)
        raise ServerStopped

    def poll(self, handle: DriverHandle) -> DriverHealth:
        return self.real.poll(handle)

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth:
        return self.real.recover(directory, fence)


def supervisor(services: Services, url: str, *, step: str | None = None) -> Supervisor:
    """The supervisor of a server at ``url``; with ``step``, one that dies at that step."""
    settings = services.settings
    factory = StoppingFactory if step == "before-record" else AttemptFactory
    launchers = dict(services.launchers)
    if step in ("before-start", "after-start"):
        launchers = {
            deployment: StoppingLauncher(launcher, after_start=step == "after-start")  # type: ignore[misc]
            for deployment, launcher in launchers.items()
        }
    return Supervisor(
        store=services.store,
        launchers=launchers,
        attempts=factory(
            store=services.store,
            apps_directory=settings.apps_directory,
            public_url=url,
            secrets=services.secrets,
            places=services.jobs.places,
        ),
        clock=services.clock,
        config=SupervisorConfig(timing=Timing(heartbeat_timeout=120)),
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Services, str]]:
    settings = Settings(
        home=tmp_path / "home",
        database_url=f"sqlite:///{tmp_path / 'store.db'}",
        default_data_roots=[(tmp_path / "data").as_uri()],
    )
    services = open_services(settings)
    try:
        with live_server(services) as url:
            yield services, url
    finally:
        for process in drivers_of(tmp_path / "home"):
            os.killpg(process.pid, signal.SIGKILL)


def tick_until(what: str, next_server: Supervisor, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        next_server.run_once()
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"waited {WAIT_SECONDS:g} s for {what}")


@pytest.mark.parametrize("step", ["before-record", "before-start", "after-start"])
def test_a_server_stopped_at_each_step_of_a_submission_leaves_one_driver(
    server: tuple[Services, str], tmp_path: Path, step: str
) -> None:
    services, url = server
    home = services.settings.resolved_home
    services.jobs.create(rate_job(tmp_path), actor=ADMIN)
    application = services.applications.run("rate-to-parquet", actor=ADMIN)
    with pytest.raises(ServerStopped):
        supervisor(services, url, step=step).run_once()

    next_server = supervisor(services, url)

    def current() -> ApplicationRecord:
        return services.applications.get(application.id, actor=ADMIN).application

    def committed(batch: int) -> Callable[[], bool]:
        def check() -> bool:
            app = current()
            return app.state is AppState.RUNNING and (app.latest.get("batchId") or -1) >= batch

        return check

    tick_until("two committed batches", next_server, committed(2))
    assert len(drivers_of(home)) == 1
    with services.store.reading() as repos:
        attempts = repos.applications.attempts(application.id)
    assert [attempt.ended_at is None for attempt in attempts][-1]
    assert len(attempts) == (2 if step == "before-start" else 1)
    assert current().execution_failures == 0

    services.applications.stop("rate-to-parquet", actor=ADMIN)
    tick_until("STOPPED", next_server, lambda: AppState(current().state) in TERMINAL_STATES)
    assert current().state is AppState.STOPPED
    assert current().exit_code == 0
    assert not drivers_of(home)
    checkpoint = tmp_path / "data" / "checkpoint" / "even_ticks"
    offsets = {p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()}
    commits = {p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
    assert commits
    assert offsets == commits
    stderr = (Path(attempts[-1].directory) / "stderr.log").read_text(errors="replace")
    assert "Race while writing batch" not in stderr
