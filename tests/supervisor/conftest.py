"""A supervisor over a real store of each backend, a fake launcher and a fake clock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from streamjobs.composition import build_server
from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.states import AppState
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from streamjobs.store import ApplicationRecord
from streamjobs.supervisor.loop import Supervisor
from tests.factories import pipeline_manifest

ALICE = Actor(Principal("alice", is_admin=True))
"""An admin: these tests are about supervising, not about who may run a job."""


@dataclass
class World:
    services: Services
    launcher: FakeLauncher
    clock: FakeClock
    supervisor: Supervisor

    def create_job(self, name: str = "ticks", **spec: object) -> str:
        self.services.jobs.create(pipeline_manifest(name, **spec), actor=ALICE)
        return name

    def app(self, application_id: str) -> ApplicationRecord:
        return self.services.applications.get(application_id, actor=ALICE).application

    def tick(self, seconds: float = 0) -> None:
        self.clock.advance(seconds)
        self.supervisor.run_once()

    def report(self, application_id: str, *events: dict[str, object]) -> None:
        token = self.launcher.drivers[-1].attempt.report_token
        assert token is not None
        numbered = [{"sequence": index, **event} for index, event in enumerate(events)]
        self.services.reports.receive(application_id, token, numbered)

    def events(self, application_id: str) -> list[str]:
        return [
            event.kind for event in self.services.applications.events(application_id, actor=ALICE)
        ]

    def failed_submission(self, application_id: str) -> str:
        """The error of an application whose one submission failed before any driver started."""
        assert self.launcher.drivers == []
        application = self.app(application_id)
        assert application.state is AppState.FAILED
        assert application.submission_attempts == 1
        assert "submission-failed" in self.events(application_id)
        return application.error_message or ""


@pytest.fixture
def world(database_url: str, tmp_path: Path) -> World:
    clock = FakeClock()
    launcher = FakeLauncher()
    settings = Settings(
        home=tmp_path / "home",
        database_url=database_url,
        public_url="http://127.0.0.1:1",
        heartbeat_timeout_seconds=60,
        abort_grace_seconds=10,
    )
    server = build_server(
        settings,
        clock=clock,
        launchers={Deployment.SINGLE_NODE: launcher},
        supervise=True,
        executor_reader=lambda handle: None,
    )
    services, supervisor = server.services, server.supervisor
    assert supervisor is not None
    services.secrets.put("default", "api-key", "s3cret", actor=ALICE)
    return World(services=services, launcher=launcher, clock=clock, supervisor=supervisor)
