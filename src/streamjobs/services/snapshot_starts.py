"""Where a Run starts a pipeline from: its checkpoint as it is, or a copy of one of its snapshots
(or, for a stateless upgrade, a fresh checkpoint: ``start_fresh``).

A Run that names a snapshot (``--from-snapshot``), and one of a job whose
``processing.initialSnapshotName`` is set and whose checkpoint holds no stream's state yet,
start from a copy of that snapshot (``SnapshotService.restore`` puts it in the checkpoint's
place and keeps what it replaced as a snapshot of kind ``replaced``). ``initialSnapshotName`` is
not used once the checkpoint holds state: the job then goes on from where it was.

The restore runs inside the Run's transaction, after the live-application check, so a job whose
application runs never has its checkpoint replaced; the application's ``started-from-snapshot``
event says what it started from.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict
from streamjobs.domain.manifest import StreamingJob
from streamjobs.services.checkpoint_state import holds_state, job_checkpoint
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories
from streamjobs.store.snapshots import SnapshotRecord

STARTED_FROM_SNAPSHOT = "started-from-snapshot"
"""The application event of a start from a snapshot."""
STARTED_FRESH = "started-fresh"
"""The application event of a start on a fresh checkpoint (a stateless upgrade)."""


class Restored(Protocol):
    """What a restore did (``services.snapshots.RestoreResult``)."""

    @property
    def snapshot(self) -> SnapshotRecord: ...

    @property
    def replaced(self) -> SnapshotRecord | None: ...

    @property
    def ahead(self) -> list[str]: ...


class Restorer(Protocol):
    """Puts a copy of a job's snapshot in its checkpoint's place (``SnapshotService.restore``):
    ``NotFound`` for a snapshot the job does not have, ``Conflict`` for one not READY, or older
    than an output's position unless ``allow_replay``."""

    def restore(
        self,
        repos: Repositories,
        job_name: str,
        name: str,
        *,
        allow_replay: bool,
        actor: Actor,
        at: datetime,
    ) -> Restored: ...

    def set_aside(
        self, repos: Repositories, job_name: str, *, actor: Actor, at: datetime
    ) -> SnapshotRecord | None:
        """Move the job's checkpoint aside as a snapshot of kind ``replaced`` (None: it held
        nothing), so the job starts on a fresh one; ``Conflict`` when it cannot be moved."""
        ...


def initial_snapshot(job: StreamingJob, checkpoint_root: str) -> str | None:
    """The snapshot a Run of ``job`` starts from when it names none: its
    ``initialSnapshotName``, while its checkpoint holds no state; else None."""
    name = job.spec.processing.initial_snapshot_name
    if name is None:
        return None
    location = job_checkpoint(job, checkpoint_root)
    if location is None or holds_state(location):
        return None
    return name


def start_from_snapshot(
    restorer: Restorer | None,
    repos: Repositories,
    job: StreamingJob,
    application: ApplicationRecord,
    *,
    from_snapshot: str | None,
    allow_replay: bool,
    checkpoint_root: str,
    actor: Actor,
    at: datetime,
) -> str | None:
    """Restore the checkpoint of ``application``'s job from the snapshot the Run names, or from
    its initial snapshot (``initial_snapshot``), and record the application's event; the
    snapshot's name, or None when the application starts from the checkpoint as it is."""
    name = from_snapshot or initial_snapshot(job, checkpoint_root)
    if name is None:
        return None
    if restorer is None:
        raise Conflict(
            f"job {job.name!r} cannot start from snapshot {name!r}: this server keeps no snapshots"
        )
    restored = restorer.restore(
        repos, job.name, name, allow_replay=allow_replay, actor=actor, at=at
    )
    repos.applications.add_event(
        application.id, at=at, kind=STARTED_FROM_SNAPSHOT, message=_described(restored)
    )
    return restored.snapshot.name


def start_fresh(
    restorer: Restorer | None,
    repos: Repositories,
    job: StreamingJob,
    application: ApplicationRecord,
    *,
    actor: Actor,
    at: datetime,
) -> str | None:
    """Set the checkpoint of ``application``'s job aside so it starts on a fresh one (neither
    the checkpoint nor ``initialSnapshotName`` is used), and record the application's event;
    the name of the snapshot the checkpoint is kept as, or None when it held nothing."""
    if restorer is None:
        raise Conflict(
            f"job {job.name!r} cannot start on a fresh checkpoint: this server keeps no snapshots"
        )
    replaced = restorer.set_aside(repos, job.name, actor=actor, at=at)
    message = "started on a fresh checkpoint"
    if replaced is not None:
        message += f"; the checkpoint it had is kept as snapshot {replaced.name}"
    repos.applications.add_event(application.id, at=at, kind=STARTED_FRESH, message=message)
    return replaced.name if replaced is not None else None


def _described(restored: Restored) -> str:
    snapshot = restored.snapshot
    batches = ", ".join(
        f"{query} at batch {batch}" for query, batch in sorted(snapshot.batches.items())
    )
    message = f"started from a copy of snapshot {snapshot.name} ({snapshot.kind}"
    message += f"; {batches})" if batches else ")"
    if restored.replaced is not None:
        message += f"; the checkpoint it replaced is kept as snapshot {restored.replaced.name}"
    if restored.ahead:
        message += "; replay allowed, these outputs were ahead of it: " + "; ".join(restored.ahead)
    return message
