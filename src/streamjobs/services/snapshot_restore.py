"""Starting a job from one of its snapshots: the check that its outputs have not gone on past it,
and the swap of its checkpoint for a copy of the snapshot; or on a fresh checkpoint, the one it
had set aside (``set_aside``).

Run calls this in its transaction once it knows the job has no live application, so nothing
writes the checkpoint meanwhile. The snapshot is copied beside the checkpoint first (a fresh
sibling, same parent, a dot-name), so the copy is complete before anything is moved; the
checkpoint, when it holds anything, then goes into the snapshot root as a ``replaced`` snapshot
(nothing is lost), and the copy is renamed into its place. A failure at any step puts back what
was moved: the job never loses a checkpoint it had.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.job_locations import Access, job_locations
from streamjobs.domain.locations import LocationError, local_path
from streamjobs.domain.manifest import OutputFormat, StreamingJob
from streamjobs.domain.snapshots import (
    SNAPSHOT_CHECKPOINT_DIRECTORY,
    OutputPosition,
    SnapshotKind,
    SnapshotStatus,
    automatic_name,
    outputs_ahead,
)
from streamjobs.runner.positions import query_id, read_position
from streamjobs.services.checkpoint_state import job_checkpoint
from streamjobs.services.connections import stored_connections
from streamjobs.services.snapshot_files import (
    Refused,
    TreeFacts,
    check_tree,
    copy_tree,
    holds_anything,
    is_real_directory,
    kept_directory,
    move_tree,
    remove_tree,
    seal,
)
from streamjobs.store.db import Repositories
from streamjobs.store.snapshots import SnapshotRecord

_FRESH_PREFIX = ".restore-"
_log = logging.getLogger(__name__)


class OutputsAhead(Conflict):
    """The snapshot is older than some of the job's outputs (HTTP 409). ``replayable`` says
    whether allowing replay would start it: not when a stateful query's sink is ahead, since
    the sink skips the batches it already holds without running them, so the query's state
    would miss them and Spark fails to load it at the next batch."""

    def __init__(self, message: str, *, ahead: list[str], replayable: bool) -> None:
        super().__init__(message)
        self.ahead = ahead
        self.replayable = replayable


@dataclass(frozen=True)
class RestoreResult:
    """What a start from a snapshot did."""

    snapshot: SnapshotRecord
    replaced: SnapshotRecord | None
    """The job's checkpoint as it was, kept as a ``replaced`` snapshot (None: it held nothing)."""
    ahead: list[str]
    """The outputs that had gone on past the snapshot (replayed, as the user allowed)."""


def local_checkpoint(job: StreamingJob, checkpoint_root: str) -> Path | None:
    """The local directory of ``job``'s checkpoint; None when it has none on this machine."""
    location = job_checkpoint(job, checkpoint_root)
    if location is None:
        return None
    try:
        path = local_path(location)
    except LocationError:
        return None
    return Path(path) if path is not None else None


def current_positions(
    repos: Repositories, job: StreamingJob, checkpoint: Path | None
) -> dict[str, OutputPosition]:
    """Where each output of ``job``'s pipeline stands now, by output key (as the runner names
    its queries: the output's name, or ``<name>-<index>`` for a name written twice)."""
    pipeline = job.spec.pipeline
    if pipeline is None:
        return {}
    connections = stored_connections(repos) if any(o.dataset for o in pipeline.outputs) else {}
    written = {
        location.field.split(".", 3)[2]: location.location
        for location in job_locations(job, connections, checkpoint_root=None)
        if location.access is Access.WRITE and location.field.startswith("spec.pipeline.outputs[")
    }
    names = [output.name for output in pipeline.outputs]
    positions = {}
    for index, output in enumerate(pipeline.outputs):
        key = output.name if names.count(output.name) == 1 else f"{output.name}-{index}"
        location = written.get(f"outputs[{index}]")
        path = _local(location) if location is not None else None
        app_id = None
        if output.format is OutputFormat.DELTA:
            if pipeline.streaming.for_each_batch_mode:
                app_id = f"{job.metadata.namespace}/{job.name}/{key}"
            elif checkpoint is not None:
                app_id = query_id(str(checkpoint / key))
        positions[key] = read_position(key, output.format.value, path, txn_app_id=app_id)
    return positions


def restore(
    repos: Repositories,
    job: StreamingJob,
    name: str,
    *,
    snapshot_root: Path,
    checkpoint_root: str,
    allow_replay: bool,
    actor: str,
    at: datetime,
) -> RestoreResult:
    """Put a copy of ``job``'s snapshot ``name`` in place of its checkpoint (see the module)."""
    snapshot = repos.snapshots.find(job.name, name)
    if snapshot is None:
        raise NotFound("snapshot", f"{job.name}/{name}")
    if snapshot.status is not SnapshotStatus.READY or snapshot.directory is None:
        raise Conflict(
            f"snapshot {name!r} of job {job.name!r} is {snapshot.status}, not READY: "
            "only a snapshot that was taken can be started from"
        )
    checkpoint = local_checkpoint(job, checkpoint_root)
    if checkpoint is None:
        raise Conflict(
            f"job {job.name!r} keeps no checkpoint on this machine, so it cannot start from "
            f"snapshot {name!r}"
        )
    kept = kept_directory(snapshot_root, snapshot.directory)
    source = kept / SNAPSHOT_CHECKPOINT_DIRECTORY if kept is not None else None
    if source is None or not is_real_directory(source):
        raise Conflict(f"the files of snapshot {name!r} of job {job.name!r} are missing")
    now = current_positions(repos, job, checkpoint)
    ahead = outputs_ahead(snapshot.positions, now)
    stateful = _stateful_ahead(snapshot, now, source)
    if stateful:
        raise OutputsAhead(
            f"snapshot {name!r} of job {job.name!r} is older than its outputs, and the "
            f"stateful queries {', '.join(stateful)} cannot replay: their sinks skip the batches "
            "they already hold without running them, so the queries' state would miss those "
            f"batches and Spark would fail at the next one ({'; '.join(ahead)}). Start from a "
            "newer snapshot, or on a fresh checkpoint (upgrade --mode stateless)",
            ahead=ahead,
            replayable=False,
        )
    if ahead and not allow_replay:
        raise OutputsAhead(
            f"snapshot {name!r} of job {job.name!r} is older than its outputs, which would be "
            f"written again from it: {'; '.join(ahead)}. Start from it anyway only if the "
            "outputs may be replayed (allow replay)",
            ahead=ahead,
            replayable=True,
        )
    swap = _Swap(checkpoint, snapshot_root)
    replaced = None
    try:
        facts = swap.measure_current()
        if facts is not None:
            replaced = _add_replaced(
                repos, job.name, swap, facts, list(now.values()), actor=actor, at=at
            )
        swap.run(source)
    except Refused as refused:
        raise Conflict(
            f"job {job.name!r} cannot start from snapshot {name!r}: {refused}; nothing was changed"
        ) from None
    except OSError as error:
        raise Conflict(
            f"job {job.name!r} cannot start from snapshot {name!r}: {error}; its checkpoint "
            "was left as it was"
        ) from None
    return RestoreResult(snapshot=snapshot, replaced=replaced, ahead=ahead)


def _stateful_ahead(
    snapshot: SnapshotRecord, now: dict[str, OutputPosition], source: Path
) -> list[str]:
    """The outputs whose sink went on past the snapshot and whose own query keeps state in
    it (``<copy>/<output>/state``): an output written from forEachBatch has no streaming state
    of its own, since its steps run on each batch as a batch."""
    ahead = {position.output for position in snapshot.positions if outputs_ahead([position], now)}
    return sorted(key for key in ahead if is_real_directory(source / key / "state"))


def set_aside(
    repos: Repositories,
    job: StreamingJob,
    *,
    snapshot_root: Path,
    checkpoint_root: str,
    actor: str,
    at: datetime,
) -> SnapshotRecord | None:
    """Move ``job``'s checkpoint, when it holds anything, into the snapshot root as a snapshot
    of kind ``replaced``, so the job starts on a fresh one (a stateless upgrade); the snapshot,
    or None when there was nothing to keep. Call it as ``restore``, in the start's transaction.
    ``Conflict`` when the checkpoint is no plain directory or cannot be moved (left as it was)."""
    checkpoint = local_checkpoint(job, checkpoint_root)
    if checkpoint is None:
        return None
    swap = _Swap(checkpoint, snapshot_root)
    try:
        facts = swap.measure_current()
        if facts is None:
            return None
        positions = current_positions(repos, job, checkpoint)
        replaced = _add_replaced(
            repos, job.name, swap, facts, list(positions.values()), actor=actor, at=at
        )
        swap.keep_current()
    except Refused as refused:
        raise Conflict(
            f"job {job.name!r} cannot start on a fresh checkpoint: {refused}; nothing was changed"
        ) from None
    except OSError as error:
        raise Conflict(
            f"job {job.name!r} cannot start on a fresh checkpoint: {error}; its checkpoint was "
            "left as it was"
        ) from None
    return replaced


def _add_replaced(
    repos: Repositories,
    job_name: str,
    swap: _Swap,
    facts: TreeFacts,
    positions: list[OutputPosition],
    *,
    actor: str,
    at: datetime,
) -> SnapshotRecord:
    """Record the checkpoint ``swap`` moves aside as a READY snapshot of kind ``replaced``."""
    return repos.snapshots.add(
        snapshot_id=swap.replaced_id,
        job_name=job_name,
        name=_free_name(repos, job_name, automatic_name(SnapshotKind.REPLACED, at)),
        kind=SnapshotKind.REPLACED,
        status=SnapshotStatus.READY,
        requested_at=at,
        requested_by=actor,
        batches=facts.batches,
        positions=positions,
        taken_at=at,
        size_bytes=facts.size_bytes,
        directory=swap.replaced_id,
    )


class _Swap:
    """The file moves of one restore, and how to undo them."""

    def __init__(self, checkpoint: Path, snapshot_root: Path) -> None:
        self._checkpoint = checkpoint
        self._root = snapshot_root
        self.replaced_id = str(uuid.uuid4())
        self._keeps_current = False

    def measure_current(self) -> TreeFacts | None:
        """The current checkpoint checked and measured, when it holds anything; ``Refused``
        when it holds a link or a special file, or is no directory."""
        checkpoint = self._checkpoint
        if not os.path.lexists(checkpoint):
            return None
        if not is_real_directory(checkpoint):
            raise Refused(f"the checkpoint {checkpoint} is not a directory")
        if not holds_anything(checkpoint):
            return None
        self._keeps_current = True
        return check_tree(checkpoint)

    def run(self, source: Path) -> None:
        """Copy ``source`` beside the checkpoint, move the checkpoint (if kept) into the
        snapshot root, and rename the copy into its place; undone on any failure."""
        checkpoint = self._checkpoint
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        fresh = checkpoint.with_name(f"{_FRESH_PREFIX}{checkpoint.name}-{uuid.uuid4().hex[:12]}")
        kept = self._root / self.replaced_id / SNAPSHOT_CHECKPOINT_DIRECTORY
        moved = False
        try:
            copy_tree(source, fresh)
            if self._keeps_current:
                kept.parent.mkdir(parents=True)
                move_tree(checkpoint, kept)
                moved = True
                seal(kept)
            elif os.path.lexists(checkpoint):
                checkpoint.rmdir()  # empty, as measured
            os.rename(fresh, checkpoint)
        except BaseException:
            remove_tree(fresh)
            if not moved or self._put_back(kept):
                remove_tree(self._root / self.replaced_id)
            raise

    def keep_current(self) -> None:
        """Move the checkpoint (measured to hold something) into the snapshot root, leaving
        none in its place; undone on any failure."""
        kept = self._root / self.replaced_id / SNAPSHOT_CHECKPOINT_DIRECTORY
        kept.parent.mkdir(parents=True)
        moved = False
        try:
            move_tree(self._checkpoint, kept)
            moved = True
            seal(kept)
        except BaseException:
            if not moved or self._put_back(kept):
                remove_tree(self._root / self.replaced_id)
            raise

    def _put_back(self, kept: Path) -> bool:
        """Move the kept checkpoint back into its place; whether it went back (a failure to is
        logged with where the checkpoint lies, and it stays there)."""
        try:
            move_tree(kept, self._checkpoint)
        except (OSError, Refused):
            _log.exception(
                "could not put the checkpoint %s back after a failed start from a snapshot; "
                "it lies at %s",
                self._checkpoint,
                kept,
            )
            return False
        return True


def _free_name(repos: Repositories, job_name: str, name: str) -> str:
    """``name``, or ``name-2``, ``name-3``… when the job has a snapshot called that already."""
    candidate, number = name, 1
    while repos.snapshots.find(job_name, candidate) is not None:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


def _local(location: str) -> str | None:
    try:
        return local_path(location)
    except LocationError:
        return None
