"""A real server whose applications run on the fake launcher, with a supervisor the test ticks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.composition import build_server
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from streamjobs.supervisor.loop import Supervisor
from tests.factories import pipeline_manifest
from tests.live_server import live_server


@dataclass
class Stage:
    token: str
    password: str
    services: Services
    api: httpx.Client
    url: str
    launcher: FakeLauncher
    supervisor: Supervisor

    def tick(self) -> None:
        self.supervisor.run_once()

    def report(self, application_id: str, events: list[dict[str, Any]]) -> httpx.Response:
        token = self.launcher.drivers[-1].attempt.report_token
        return httpx.post(
            f"{self.url}/api/v1/applications/{application_id}/reports",
            json={"events": events},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    clock = FakeClock()
    launcher = FakeLauncher()
    settings = Settings(home=tmp_path / "home", public_url="http://127.0.0.1:1")
    server = build_server(
        settings,
        clock=clock,
        launchers={Deployment.SINGLE_NODE: launcher},
        supervise=True,
        executor_reader=lambda handle: None,
    )
    services, supervisor = server.services, server.supervisor
    assert supervisor is not None
    bootstrap = services.identity.bootstrap_admin()
    token, password = bootstrap.token, bootstrap.password
    assert token is not None
    assert password is not None
    with live_server(server) as url:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as api:
            api.put("/api/v1/jobs/ticks", json=pipeline_manifest("ticks")).raise_for_status()
            yield Stage(
                token=token,
                password=password,
                services=services,
                api=api,
                url=url,
                launcher=launcher,
                supervisor=supervisor,
            )
