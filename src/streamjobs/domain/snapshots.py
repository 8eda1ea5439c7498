"""Snapshots of a job's checkpoint: what one records, how runner and server hand one over, and
the rules on them.

A snapshot is a named, immutable copy of all of a job's query checkpoints as of one committed
batch, with each output's position at that batch (DESIGN.md "State, alerts, leadership"). The
runner takes it at a batch boundary and stages it in its attempt directory:
``snapshots/<name>/checkpoint/`` (the copy) and ``snapshots/<name>/snapshot.json`` (a
``StagedSnapshot``, written last, so a staged snapshot without it is incomplete). The server
collects it into its snapshot root, which no job can reach, checks it and records it.

The server asks for a snapshot while the driver runs by writing ``snapshot-request`` (a
``SnapshotRequest``) into the attempt directory, and for one at a graceful stop by writing the
same JSON into the stop file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, ValidationError
from pydantic.alias_generators import to_camel

from streamjobs.domain.errors import FieldError, InvalidInput

SNAPSHOT_REQUEST_FILE = "snapshot-request"
"""In the attempt directory: the server's request for a snapshot now (a ``SnapshotRequest``)."""
SNAPSHOTS_DIRECTORY = "snapshots"
"""In the attempt directory: where the runner stages the snapshots it takes."""
SNAPSHOT_RECORD_FILE = "snapshot.json"
SNAPSHOT_CHECKPOINT_DIRECTORY = "checkpoint"
MAX_RECORD_BYTES = 1024 * 1024
"""A staged snapshot's record larger than this is refused unread."""


class SnapshotKind(StrEnum):
    """Why a snapshot was taken."""

    MANUAL = "manual"
    """On demand, by a person (API, CLI, job page); kept until deleted."""
    PERIODIC = "periodic"
    """Every ``processing.snapshotIntervalMillis``."""
    STOP = "stop"
    """Aligned: at a graceful stop, every output at the same batch."""
    SUSPEND = "suspend"
    """Aligned: at a person's Suspend."""
    REPLACED = "replaced"
    """The checkpoint a start from a snapshot set aside, kept so nothing is lost."""
    UPGRADE = "upgrade"
    """Aligned: at the graceful stop of an upgrade, the point its rollback goes back to; kept
    until deleted."""


AUTOMATIC_KINDS = frozenset({SnapshotKind.PERIODIC, SnapshotKind.STOP, SnapshotKind.SUSPEND})
"""The kinds ``processing.snapshotsToKeep`` bounds, together; the oldest are deleted first."""


class SnapshotStatus(StrEnum):
    """Where a snapshot is in its life."""

    TAKING = "TAKING"
    """Asked for; the runner has not handed it over yet."""
    READY = "READY"
    FAILED = "FAILED"
    """It could not be taken; ``error`` says why. Nothing of it is kept but the record."""


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, strict=True, frozen=True, extra="forbid"
    )

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class OutputPosition(_Model):
    """Where one output stood at the snapshot's batch.

    - file sinks (parquet, json, csv, text): ``batch_id``, the last batch in ``_spark_metadata``;
    - delta: ``version`` of the table and ``txn_version``, the last batch id the query's writer
      (``txn_app_id``) committed;
    - iceberg: ``snapshot_id`` of the table and the ``batch_marker`` that snapshot carries;
    - kafka, jdbc, console: ``tracked`` is False.
    """

    output: str
    format: str
    tracked: bool = True
    batch_id: StrictInt | None = None
    version: StrictInt | None = None
    txn_app_id: str | None = None
    txn_version: StrictInt | None = None
    snapshot_id: StrictInt | None = None
    batch_marker: str | None = None

    def describe(self) -> str:
        """The position in words: ``delta version 7 (batch 12)``."""
        if not self.tracked:
            return f"{self.format}: not tracked"
        if self.version is not None:
            batch = f" (batch {self.txn_version})" if self.txn_version is not None else ""
            return f"delta version {self.version}{batch}"
        if self.snapshot_id is not None:
            marker = f" ({self.batch_marker})" if self.batch_marker else ""
            return f"iceberg snapshot {self.snapshot_id}{marker}"
        if self.batch_id is not None:
            return f"{self.format} sink log batch {self.batch_id}"
        return f"{self.format}: nothing written yet"


class SnapshotRequest(_Model):
    """The server's request for a snapshot, in ``snapshot-request`` or the stop file."""

    name: str
    kind: SnapshotKind = SnapshotKind.MANUAL


class StagedSnapshot(_Model):
    """What the runner records beside a snapshot it staged (``snapshot.json``)."""

    name: str
    kind: SnapshotKind
    taken_at: str
    """ISO 8601, the runner's clock."""
    batches: dict[str, StrictInt]
    """The last committed batch id of each query, by its checkpoint sub-directory."""
    positions: list[OutputPosition]
    error: str | None = None
    """Set when the runner could not take it: why (then there is no copy)."""


def parse_request(text: str) -> SnapshotRequest | None:
    """The request in a stop file or ``snapshot-request``; None for an empty (plain) stop file
    or one that does not parse."""
    if not text.strip():
        return None
    try:
        return SnapshotRequest.model_validate_json(text)
    except ValidationError:
        return None


def parse_staged(text: str, *, source: str) -> StagedSnapshot:
    """A staged snapshot's record; ``InvalidInput`` naming ``source`` and each broken field."""
    try:
        return StagedSnapshot.model_validate_json(text)
    except ValidationError as error:
        problems = error.errors()
        if any(item["type"] == "json_invalid" for item in problems):
            message = f"is not JSON: {problems[0]['msg']}"
            raise InvalidInput([FieldError("", message)], source=source) from None
        errors = [
            FieldError(".".join(str(part) for part in item["loc"]), item["msg"])
            for item in problems
        ]
        raise InvalidInput(errors, source=source) from None


def automatic_name(kind: SnapshotKind, at: datetime) -> str:
    """The name of a snapshot nobody named: ``stop-20261127-013000``."""
    return f"{kind}-{at:%Y%m%d-%H%M%S}"


def outputs_ahead(
    snapshot: Sequence[OutputPosition], current: Mapping[str, OutputPosition]
) -> list[str]:
    """The outputs that went on past the snapshot's positions, each as ``output: snapshot at X,
    now at Y``. Untracked outputs, and those the snapshot or now does not know, are not judged."""
    ahead = []
    for taken in snapshot:
        now = current.get(taken.output)
        if now is None or not taken.tracked or not now.tracked:
            continue
        if _later(taken, now):
            ahead.append(
                f"{taken.output}: the snapshot is at {taken.describe()}, "
                f"the output now at {now.describe()}"
            )
    return ahead


def _later(taken: OutputPosition, now: OutputPosition) -> bool:
    for field_name in ("version", "batch_id"):
        before, after = getattr(taken, field_name), getattr(now, field_name)
        if after is not None and (before is None or after > before):
            return True
    return now.snapshot_id is not None and now.snapshot_id != taken.snapshot_id


@dataclass(frozen=True)
class Kept:
    """A snapshot as retention sees it."""

    name: str
    kind: SnapshotKind
    taken_at: datetime


def to_prune(snapshots: Iterable[Kept], *, keep: int) -> list[str]:
    """The automatic snapshots beyond the newest ``keep``, oldest first; others are never pruned."""
    automatic = sorted(
        (item for item in snapshots if item.kind in AUTOMATIC_KINDS),
        key=lambda item: item.taken_at,
        reverse=True,
    )
    return [item.name for item in reversed(automatic[keep:])]


# -- what Spark and the sinks leave on disk, read from directory listings and log text ---------

_BATCH_ENTRY = re.compile(r"^(\d+)(\.compact)?$")
_DELTA_COMMIT = re.compile(r"^(\d{20})\.json$")


def last_batch(names: Iterable[str]) -> int | None:
    """The highest batch id among a checkpoint's ``commits``/``offsets`` entries or a file
    sink's ``_spark_metadata`` entries (``12``, ``19.compact``); None when there is none."""
    found = [int(match.group(1)) for name in names if (match := _BATCH_ENTRY.match(name))]
    return max(found) if found else None


def delta_versions(names: Iterable[str]) -> list[int]:
    """The commit versions among a ``_delta_log`` directory's entries, newest first."""
    found = [int(match.group(1)) for name in names if (match := _DELTA_COMMIT.match(name))]
    return sorted(found, reverse=True)


def delta_commit_file(version: int) -> str:
    return f"{version:020d}.json"


def delta_transaction(commit_text: str, app_id: str) -> int | None:
    """The ``txn`` version ``app_id`` set in one Delta commit (its JSON lines), if it set one."""
    for line in commit_text.splitlines():
        if '"txn"' not in line:
            continue
        try:
            action = json.loads(line)
        except ValueError:
            continue
        txn = action.get("txn") if isinstance(action, dict) else None
        if isinstance(txn, dict) and txn.get("appId") == app_id:
            version = txn.get("version")
            return version if isinstance(version, int) else None
    return None
