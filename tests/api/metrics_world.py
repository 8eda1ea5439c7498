"""A real server with a metrics token and jobs whose newest applications are in several states,
written through the API and the drivers' report endpoint (fake launcher, a supervisor the test
ticks, a fake clock): what the metrics tests scrape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from streamjobs.composition import Server, build_server
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.settings import Settings
from tests.factories import pipeline_manifest
from tests.live_server import live_server

METRICS_TOKEN = "metrics-token-for-the-tests"

FLOWING_PROGRESS = {
    "id": "query-id",
    "runId": "run-id",
    "name": "evens",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "batchId": 4,
    "numInputRows": 50,
    "inputRowsPerSecond": 12.5,
    "processedRowsPerSecond": 20.0,
    "durationMs": {"addBatch": 500, "triggerExecution": 800},
    "stateOperators": [{"operatorName": "dedupe", "numRowsTotal": 7, "memoryUsedBytes": 4096}],
    "sources": [
        {
            "description": "KafkaV2[Subscribe[orders]]",
            "startOffset": {"orders": {"0": 0, "1": 0}},
            "endOffset": {"orders": {"0": 10, "1": 20}},
            "latestOffset": {"orders": {"0": 40, "1": 25}},
        }
    ],
}
"""A micro-batch of a Kafka query 35 records behind (30 in partition 0) with 7 rows in state."""
SCRAPED_AFTER_SECONDS = 60.0
"""How long after the batch's start (the fake clock's start) the tests scrape."""
FLOWING_FIGURES = {
    "streamjobs_application_input_rows_per_second": 12.5,
    "streamjobs_application_processed_rows_per_second": 20.0,
    "streamjobs_application_batch_duration_seconds": 0.8,
    "streamjobs_application_kafka_records_behind": 35.0,
    "streamjobs_application_kafka_max_partition_records_behind": 30.0,
    "streamjobs_application_seconds_behind": 12.0,
    "streamjobs_application_state_rows": 7.0,
    "streamjobs_application_state_memory_bytes": 4096.0,
    "streamjobs_application_last_progress_age_seconds": SCRAPED_AFTER_SECONDS - 0.8,
}
"""What the metrics must show of ``FLOWING_PROGRESS`` (and its backlog report)."""


DASHBOARD = Path(__file__).parents[2] / "docs" / "grafana-dashboard.json"


def dashboard_queries() -> list[str]:
    """The PromQL of every panel of docs/grafana-dashboard.json."""
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


@dataclass
class MetricsWorld:
    server: Server
    url: str
    api: httpx.Client
    launcher: FakeLauncher
    clock: FakeClock
    applications: dict[str, str] = field(default_factory=dict)
    """Application id by job name."""

    def tick(self) -> None:
        assert self.server.supervisor is not None
        self.server.supervisor.run_once()

    def run(self, job: str, **spec: Any) -> str:
        self.api.put(f"/api/v1/jobs/{job}", json=pipeline_manifest(job, **spec)).raise_for_status()
        started = self.api.post(f"/api/v1/jobs/{job}/run")
        assert started.status_code == 201, started.text
        application_id: str = started.json()["id"]
        self.applications[job] = application_id
        self.tick()
        self.report(job, [{"type": "heartbeat", "sequence": 0}])
        self.tick()
        assert self.application(job)["state"] == "RUNNING"
        return application_id

    def report(self, job: str, events: list[dict[str, Any]]) -> None:
        application_id = self.applications[job]
        driver = [d for d in self.launcher.drivers if d.attempt.application_id == application_id]
        answer = httpx.post(
            f"{self.url}/api/v1/applications/{application_id}/reports",
            json={"events": events},
            headers={"Authorization": f"Bearer {driver[-1].attempt.report_token}"},
        )
        assert answer.is_success, answer.text

    def exit(self, job: str, code: int) -> None:
        application_id = self.applications[job]
        index = max(
            i
            for i, driver in enumerate(self.launcher.drivers)
            if driver.attempt.application_id == application_id
        )
        self.launcher.exit(index, code)
        self.tick()

    def application(self, job: str) -> dict[str, Any]:
        answer = self.api.get(f"/api/v1/applications/{self.applications[job]}")
        answer.raise_for_status()
        found: dict[str, Any] = answer.json()
        return found

    def scrape(self, token: str = METRICS_TOKEN) -> httpx.Response:
        return httpx.get(f"{self.url}/metrics", headers={"Authorization": f"Bearer {token}"})


EXPECTED_STATES = {
    "flowing": "RUNNING",
    "quiet": "RUNNING",
    "stopped": "STOPPED",
    "failed": "FAILED",
    "retrying": "PENDING_RERUN",
}
"""Each job of the world and its newest application's state; ``idle`` is never run."""


@contextmanager
def metrics_world(home: Path, **settings: Any) -> Iterator[MetricsWorld]:
    """The world of ``EXPECTED_STATES`` on a live server with ``settings`` (default: the
    metrics token ``METRICS_TOKEN``)."""
    clock = FakeClock()
    launcher = FakeLauncher()
    server = build_server(
        Settings(
            home=home,
            public_url="http://127.0.0.1:1",
            **(settings or {"metrics_token": METRICS_TOKEN}),
        ),
        clock=clock,
        launchers={Deployment.SINGLE_NODE: launcher},
        supervise=True,
        executor_reader=lambda handle: None,
    )
    token = server.services.identity.bootstrap_admin().token
    try:
        with (
            live_server(server) as url,
            httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as api,
        ):
            world = MetricsWorld(server=server, url=url, api=api, launcher=launcher, clock=clock)
            _populate(world)
            yield world
    finally:
        server.close()


def _populate(world: MetricsWorld) -> None:
    world.run("flowing")
    progress = {"type": "progress", "sequence": 1, "name": "evens", "progress": FLOWING_PROGRESS}
    backlog = {"type": "backlog", "sequence": 2, "name": "evens", "batchId": 4, "secondsBehind": 12}
    world.report("flowing", [progress, backlog])
    world.run("quiet")  # reports heartbeats only: no figure but its last report's age
    world.run("stopped")
    world.api.post("/api/v1/jobs/stopped/stop").raise_for_status()
    world.tick()
    world.tick()
    world.run("failed")
    world.exit("failed", 1)
    retry = {"type": "OnFailure", "onFailureRetries": 3, "onFailureRetryInterval": 600}
    world.run("retrying", restartPolicy=retry)
    world.exit("retrying", 1)
    world.api.put("/api/v1/jobs/idle", json=pipeline_manifest("idle")).raise_for_status()
    world.clock.advance(SCRAPED_AFTER_SECONDS)
    for job, state in EXPECTED_STATES.items():
        assert world.application(job)["state"] == state, job
