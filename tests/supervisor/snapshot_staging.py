"""Playing the runner's part of a snapshot in supervisor tests: what it stages in its attempt
directory (a checkpoint copy and, last, its record), and a job's checkpoint and file output as
Spark leaves them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from streamjobs.domain.locations import local_path
from streamjobs.domain.snapshots import (
    SNAPSHOTS_DIRECTORY,
    OutputPosition,
    SnapshotKind,
    StagedSnapshot,
)
from tests.staged_files import write_staged_snapshot
from tests.supervisor.conftest import ALICE, World


def stage_snapshot(
    world: World,
    application_id: str,
    name: str,
    kind: SnapshotKind,
    *,
    batches: Mapping[str, int],
    positions: Sequence[OutputPosition] = (),
    error: str | None = None,
) -> Path:
    """Stage a snapshot in the application's latest attempt directory, as the runner does."""
    attempt = world.services.applications.get(application_id, actor=ALICE).attempts[-1]
    record = StagedSnapshot(
        name=name,
        kind=kind,
        taken_at=world.clock.now().isoformat(),
        batches=dict(batches),
        positions=list(positions),
        error=error,
    )
    return write_staged_snapshot(
        Path(attempt.directory) / SNAPSHOTS_DIRECTORY / name,
        json.dumps(record.to_wire()),
        batches if error is None else {},
        query_id="q",
    )


def checkpoint_of(world: World, application_id: str) -> Path:
    """The local directory of the application's checkpoint, from the spec it runs."""
    spec = world.services.applications.template(application_id, actor=ALICE)
    location = local_path(spec["spec"]["pipeline"]["streaming"]["checkpointLocation"])
    assert location is not None
    return Path(location)


def write_sink_log(output: Path, last_batch: int) -> None:
    """A file sink's ``_spark_metadata`` after batches 0..``last_batch``."""
    log = output / "_spark_metadata"
    log.mkdir(parents=True, exist_ok=True)
    for batch in range(last_batch + 1):
        (log / str(batch)).write_text("v1\n", encoding="utf-8")


def automatic(kind: SnapshotKind, at: datetime) -> str:
    return f"{kind}-{at:%Y%m%d-%H%M%S}"
