"""A real server for the State view's tests: applications on the fake launcher, a supervisor the
test ticks, and the ``state`` tool answered by a script (``ScriptedStateTool``) that plays a
checkpoint with one stateful query. The real tool is covered in-process by
``tests/spark/test_state_inspection.py`` and through spark-submit by the browser test."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.composition import server_over
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.launch.tool_runs import ToolResult, ToolRun
from streamjobs.services.container import Services, open_services
from streamjobs.services.state_view import StateView
from streamjobs.settings import Settings
from streamjobs.supervisor.loop import Supervisor
from tests.factories import pipeline_manifest
from tests.live_server import live_server

JOB = "counts"
QUERY = "evens"
STORES = [
    {
        "operatorId": 0,
        "operatorName": "stateStoreSave",
        "stateStoreName": "default",
        "numPartitions": 2,
        "minBatchId": 0,
        "maxBatchId": 4,
    }
]


@dataclass
class ScriptedStateTool:
    """Answers state tool runs as the tool would for a checkpoint holding ``stores`` under the
    query ``evens``, or as ``answer`` says; keeps every run and whether its work directory was
    there while it ran."""

    stores: list[dict[str, Any]] = field(default_factory=lambda: list(STORES))
    answer: Callable[[ToolRun], ToolResult] | None = None
    runs: list[ToolRun] = field(default_factory=list)
    directories_there: list[bool] = field(default_factory=list)

    def run(self, run: ToolRun) -> ToolResult:
        self.runs.append(run)
        self.directories_there.append(run.directory.is_dir())
        if self.answer is not None:
            return self.answer(run)
        arguments = _arguments(run.arguments)
        result: dict[str, Any] = {"queries": [{"query": QUERY, "stores": self.stores}]}
        if "--operator" in arguments:
            limit = int(arguments["--limit"])
            rows = [
                {"partition": n % 2, "key": f'{{"k": "key-{n}"}}', "value": f'{{"count": {n}}}'}
                for n in range(3)
            ]
            result["preview"] = {
                "query": arguments.get("--query", QUERY),
                "operatorId": int(arguments["--operator"]),
                "storeName": "default",
                "batchId": 4,
                "limit": limit,
                "rows": rows[:limit],
                "more": limit < len(rows),
            }
        return ToolResult(exit_code=0, result=result, stderr_tail="", timed_out=False)


@dataclass
class StateStage:
    services: Services
    supervisor: Supervisor
    launcher: FakeLauncher
    clock: FakeClock
    tool: ScriptedStateTool
    api: httpx.Client
    url: str
    token: str
    password: str
    home: Path
    sequence: int = 0

    def tick(self) -> None:
        self.supervisor.run_once()

    def running(self, name: str = JOB, **spec: Any) -> str:
        """A new application of a pipeline job ``name`` (created first), RUNNING."""
        if self.api.get(f"/api/v1/jobs/{name}").status_code == 404:
            self.api.put(
                f"/api/v1/jobs/{name}", json=pipeline_manifest(name, **spec)
            ).raise_for_status()
        started = self.api.post(f"/api/v1/jobs/{name}/run")
        started.raise_for_status()
        application_id: str = started.json()["id"]
        self.tick()
        self.report(application_id, [{"type": "heartbeat"}])
        self.tick()
        return application_id

    def checkpoint(self, name: str = JOB) -> Path:
        """The job's derived checkpoint, with its query's directory made as a driver would."""
        directory = self.home / "checkpoints" / "default" / name
        for entry in ("offsets", "commits", "state"):
            (directory / QUERY / entry).mkdir(parents=True, exist_ok=True)
        return directory

    def progress(self, application_id: str, batch: int, rows: int, *, name: str = JOB) -> None:
        """A progress report of the job's query at ``batch`` with ``rows`` state rows."""
        progress = {
            "id": "q-1",
            "runId": "r-1",
            "name": f"{name}/{QUERY}",
            "batchId": batch,
            "eventTime": {"watermark": "2024-01-01T00:01:00.000Z"},
            "stateOperators": [
                {
                    "operatorName": "stateStoreSave",
                    "numRowsTotal": rows,
                    "numRowsUpdated": 1,
                    "memoryUsedBytes": 2048,
                    "numRowsRemoved": 0,
                    "numRowsDroppedByWatermark": 0,
                }
            ],
        }
        event = {"type": "progress", "id": "q-1", "name": f"{name}/{QUERY}", "progress": progress}
        self.report(application_id, [event])

    def report(self, application_id: str, events: list[dict[str, Any]]) -> None:
        for event in events:
            event.setdefault("sequence", self.sequence)
            self.sequence += 1
        token = next(
            driver.attempt.report_token
            for driver in reversed(self.launcher.drivers)
            if driver.attempt.application_id == application_id
        )
        answer = httpx.post(
            f"{self.url}/api/v1/applications/{application_id}/reports",
            json={"events": events},
            headers={"Authorization": f"Bearer {token}"},
        )
        answer.raise_for_status()


@pytest.fixture
def state_stage(tmp_path: Path) -> Iterator[StateStage]:
    clock = FakeClock()
    launcher = FakeLauncher()
    home = tmp_path / "home"
    settings = Settings(home=home, public_url="http://127.0.0.1:1")
    services = open_services(settings, clock=clock, launchers={Deployment.SINGLE_NODE: launcher})
    tool = ScriptedStateTool()
    view = StateView(store=services.store, clock=clock, tools=tool, work_root=tmp_path / "tools")
    services = dataclasses.replace(services, state_view=view)
    server = server_over(services, supervise=True, executor_reader=lambda handle: None)
    assert server.supervisor is not None
    bootstrap = services.identity.bootstrap_admin()
    assert bootstrap.token is not None
    assert bootstrap.password is not None
    try:
        with live_server(server) as url:
            headers = {"Authorization": f"Bearer {bootstrap.token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as api:
                yield StateStage(
                    services=services,
                    supervisor=server.supervisor,
                    launcher=launcher,
                    clock=clock,
                    tool=tool,
                    api=api,
                    url=url,
                    token=bootstrap.token,
                    password=bootstrap.password,
                    home=home.resolve(),
                )
    finally:
        services.store.close()


def _arguments(arguments: list[str]) -> dict[str, str]:
    return dict(zip(arguments[::2], arguments[1::2], strict=False))
