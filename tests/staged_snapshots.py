"""What the runner does for a snapshot, done by hand for tests over the fake launcher: a pipeline
job of its own that is RUNNING, and a snapshot staged in its attempt directory the way the runner
stages one (the copy first, ``snapshot.json`` last), for the supervisor's tick to collect."""

from __future__ import annotations

import json
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.errors import NotFound
from streamjobs.domain.snapshots import (
    SNAPSHOTS_DIRECTORY,
    OutputPosition,
    SnapshotKind,
    StagedSnapshot,
)
from tests.factories import pipeline_manifest
from tests.staged_files import write_staged_snapshot
from tests.staged_server import Stage

ADMIN = Actor(Principal("admin", is_admin=True))
OUTPUT = "evens"
"""The one output (and query) of ``pipeline_manifest``'s jobs."""


@pytest.fixture
def job(stage: Stage) -> Iterator[str]:
    """A pipeline job of this test alone, writing parquet under ``/tmp/out/<job>``."""
    name = f"snap-{uuid.uuid4().hex[:10]}"
    stage.api.put(f"/api/v1/jobs/{name}", json=pipeline_manifest(name)).raise_for_status()
    yield name
    shutil.rmtree(output_directory(name).parent, ignore_errors=True)


def output_directory(job: str) -> Path:
    return Path(f"/tmp/out/{job}/{OUTPUT}")


def run_until_running(stage: Stage, job: str, body: dict[str, object] | None = None) -> str:
    """Run the job (with ``body`` as the Run's options) and bring its application to RUNNING;
    its id."""
    started = stage.api.post(f"/api/v1/jobs/{job}/run", json=body)
    assert started.status_code == 201, started.text
    application_id: str = started.json()["id"]
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    assert stage.api.get(f"/api/v1/applications/{application_id}").json()["state"] == "RUNNING"
    return application_id


def attempt_directory(stage: Stage) -> Path:
    """The attempt directory of the latest driver the fake launcher started."""
    return Path(stage.launcher.drivers[-1].handle.directory)


def stage_snapshot(
    stage: Stage,
    name: str,
    *,
    batch: int = 1,
    kind: SnapshotKind = SnapshotKind.MANUAL,
    error: str | None = None,
) -> None:
    """Stage the snapshot ``name`` in the latest attempt directory as the runner would: a copy
    of a checkpoint whose one query committed batches 0 to ``batch``, then its record; with
    ``error``, only a record saying the runner could not take it."""
    position = OutputPosition(output=OUTPUT, format="parquet", batch_id=batch)
    record = StagedSnapshot(
        name=name,
        kind=kind,
        taken_at=stage.services.clock.now().isoformat(),
        batches={} if error else {OUTPUT: batch},
        positions=[] if error else [position],
        error=error,
    )
    write_staged_snapshot(
        attempt_directory(stage) / SNAPSHOTS_DIRECTORY / name,
        json.dumps(record.to_wire()),
        {} if error else {OUTPUT: batch},
        query_id=str(uuid.uuid4()),
    )


def collected_when_asked(
    stage: Stage, job: str, name: str, *, error: str | None = None
) -> threading.Thread:
    """A thread that, once the job's snapshot ``name`` is asked for (its row exists), stages it
    (failed with ``error``, if given) and ticks the supervisor to collect it: the runner's and the
    supervisor's part while a command waits for the snapshot."""

    def collect() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                stage.services.snapshots.get(job, name, actor=ADMIN)
                break
            except NotFound:
                time.sleep(0.02)
        stage.tick()
        stage_snapshot(stage, name, error=error)
        stage.tick()

    thread = threading.Thread(target=collect, name=f"collect-{name}", daemon=True)
    thread.start()
    return thread
