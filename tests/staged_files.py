"""The files a runner leaves for a snapshot, written by hand: one query's checkpoint as Spark
leaves it, and a snapshot staged in an attempt directory as the runner stages one (the copy
first, its record last). The staging helpers of the snapshot and upgrade tests share these."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from streamjobs.domain.snapshots import SNAPSHOT_CHECKPOINT_DIRECTORY, SNAPSHOT_RECORD_FILE


def write_query_checkpoint(directory: Path, last_batch: int, *, query_id: str = "query-1") -> None:
    """One query's checkpoint in ``directory`` as Spark leaves it after committing batches
    0..``last_batch``; ``query_id`` is the id its ``metadata`` names."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metadata").write_text(json.dumps({"id": query_id}) + "\n")
    for entry in ("offsets", "commits"):
        (directory / entry).mkdir(exist_ok=True)
        for batch in range(last_batch + 1):
            (directory / entry / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def write_staged_snapshot(
    staged: Path, record: str, checkpoints: Mapping[str, int], *, query_id: str = "query-1"
) -> Path:
    """Stage a snapshot in ``staged`` (a directory under an attempt's ``snapshots``) as the runner
    does: a checkpoint copy with each query of ``checkpoints`` at its last batch, then ``record``
    (the record file's text), written aside and renamed into place; ``staged``."""
    staged.mkdir(parents=True, exist_ok=True)
    for query, batch in checkpoints.items():
        write_query_checkpoint(
            staged / SNAPSHOT_CHECKPOINT_DIRECTORY / query, batch, query_id=query_id
        )
    partial = staged / (SNAPSHOT_RECORD_FILE + ".tmp")
    partial.write_text(record)
    partial.rename(staged / SNAPSHOT_RECORD_FILE)
    return staged
