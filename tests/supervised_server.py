"""A real server on a given database whose supervisor runs by itself, on the fake launcher.

For tests of what requests and the supervisor do at the same time (a Delete waiting for an
abort, Run racing Delete), where a supervisor the test ticks by hand cannot keep up.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from tests.live_server import live_server


@dataclass(frozen=True)
class SupervisedServer:
    url: str
    token: str
    services: Services
    launcher: FakeLauncher

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@contextmanager
def supervised_server(
    database_url: str,
    home: Path,
    *,
    supervised: bool = True,
    delete_abort_wait_seconds: float = 30.0,
) -> Iterator[SupervisedServer]:
    """A server on ``database_url`` with its supervisor ticking every 50 ms (none when not
    ``supervised``: then an abort never ends)."""
    launcher = FakeLauncher()
    settings = Settings(
        home=home,
        database_url=database_url,
        checkpoint_root="file:///checkpoints",
        delete_abort_wait_seconds=delete_abort_wait_seconds,
    )
    services = open_services(settings, launchers={Deployment.SINGLE_NODE: launcher})
    token = services.identity.bootstrap_admin().token
    assert token is not None
    supervisor = Supervisor(
        store=services.store,
        launchers=services.launchers,
        attempts=AttemptFactory(
            store=services.store,
            apps_directory=settings.apps_directory,
            public_url="http://127.0.0.1:1",
            secrets=services.secrets,
        ),
        clock=services.clock,
        config=SupervisorConfig(timing=Timing(), interval_seconds=0.05),
        executor_reader=lambda handle: None,
    )
    if supervised:
        supervisor.start()
    try:
        with live_server(services) as url:
            yield SupervisedServer(url=url, token=token, services=services, launcher=launcher)
    finally:
        if supervised:
            supervisor.stop()
        services.store.close()
