"""A real server for the upgrade pages' tests: applications on the fake launcher, a supervisor the
test ticks, and the compatibility check's dry run answered by a script (``ScriptedDryRun``)
instead of a sandboxed spark-submit. The check itself, the upgrade service and the supervisor's
upgrade step are the server's own. ``tests/spark/test_dry_run.py`` covers the real dry run."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from streamjobs.composition import server_over
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.launch.tool_runs import FakeToolRunner, ToolResult, ToolRun
from streamjobs.services.compatibility import CompatibilityCheck
from streamjobs.services.container import open_services
from streamjobs.services.upgrades import UpgradeService
from streamjobs.settings import Settings
from tests.factories import pipeline_manifest
from tests.live_server import live_server
from tests.staged_files import write_query_checkpoint
from tests.staged_server import Stage
from tests.staged_snapshots import OUTPUT

FITS = {"compatible": True, "queries": [{"query": OUTPUT, "batch": 2}]}
KEY_SCHEMA_FAILURE = (
    "[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state "
    "key schema.\nExisting key_schema=StructType(StructField(user,StringType,true)) and new "
    "key_schema=StructType(StructField(id,LongType,true)).\nIf you want to force it"
)
KEY_CHANGED = {
    "compatible": False,
    "queries": [
        {
            "query": OUTPUT,
            "batch": 2,
            "error": KEY_SCHEMA_FAILURE,
            "errorClass": "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
            "operators": [{"operatorId": 0, "operatorName": "stateStoreSave"}],
        }
    ],
}
"""The dry run's answer when the new spec groups by another key than the checkpoint's state."""


GATE_SECONDS = 60.0
"""How long a gated dry run waits for the test to let it answer."""


@dataclass
class ScriptedDryRun:
    """Answers every dry run with ``answer`` (the tool's result document); with ``gate``, only
    once the test sets it, so a page can be seen while it waits."""

    answer: dict[str, Any] = field(default_factory=lambda: dict(FITS))
    gate: threading.Event | None = None

    def __call__(self, run: ToolRun) -> ToolResult:
        if self.gate is not None and not self.gate.wait(GATE_SECONDS):
            return ToolResult(exit_code=None, result=None, stderr_tail="", timed_out=True)
        return ToolResult(exit_code=0, result=self.answer, stderr_tail="", timed_out=False)


@dataclass
class UpgradeStage(Stage):
    """The staged server, and the script its dry runs answer with."""

    dry_run: ScriptedDryRun
    tools: FakeToolRunner

    def with_state(self, job: str, batch: int = 2) -> Path:
        """Make the job's checkpoint hold its query's committed batches 0..``batch``, as a
        driver would have left it, so the check has something to replay."""
        template = self.api.get(f"/api/v1/jobs/{job}/template").json()
        location = template["spec"]["pipeline"]["streaming"]["checkpointLocation"]
        checkpoint = Path(urlsplit(location).path)
        write_query_checkpoint(checkpoint / OUTPUT, batch, query_id="query-1")
        return checkpoint


@contextmanager
def upgrade_stage(directory: Path) -> Iterator[UpgradeStage]:
    """The server, serving until the block ends, with the ``ticks`` job created."""
    clock = FakeClock()
    launcher = FakeLauncher()
    settings = Settings(home=directory / "home", public_url="http://127.0.0.1:1")
    services = open_services(settings, clock=clock, launchers={Deployment.SINGLE_NODE: launcher})
    script = ScriptedDryRun()
    tools = FakeToolRunner(script)
    checkpoint_root = settings.resolved_checkpoint_root
    compatibility = CompatibilityCheck(
        store=services.store,
        clock=clock,
        tools=tools,
        checkpoint_root=checkpoint_root,
        work_directory=directory / "tools",
        secrets=services.secrets,
    )
    upgrades = UpgradeService(
        store=services.store,
        clock=clock,
        checkpoint_root=checkpoint_root,
        starter=services.applications,
        places=services.jobs.places,
        compatibility=compatibility,
    )
    services = dataclasses.replace(services, compatibility=compatibility, upgrades=upgrades)
    server = server_over(services, supervise=True, executor_reader=lambda handle: None)
    assert server.supervisor is not None
    bootstrap = services.identity.bootstrap_admin()
    assert bootstrap.token is not None
    assert bootstrap.password is not None
    try:
        with live_server(server) as url:
            headers = {"Authorization": f"Bearer {bootstrap.token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as api:
                api.put("/api/v1/jobs/ticks", json=pipeline_manifest("ticks")).raise_for_status()
                yield UpgradeStage(
                    token=bootstrap.token,
                    password=bootstrap.password,
                    services=services,
                    api=api,
                    url=url,
                    launcher=launcher,
                    supervisor=server.supervisor,
                    dry_run=script,
                    tools=tools,
                )
    finally:
        services.store.close()
