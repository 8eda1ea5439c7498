"""Collecting the snapshots a runner staged in its attempt directory into the snapshot root.

The runner stages each snapshot as ``<attempt>/snapshots/<name>/`` with its ``checkpoint/`` copy
and, last, its ``snapshot.json`` record; a staged directory without the record is not finished
and is left alone. Everything staged was written by the job, so it is hostile input: the staged
directory is first moved out of the job's reach (into the snapshot root, which no job can see),
made the server's own, and only then checked: no symbolic link or special file anywhere, a
record that parses within ``MAX_RECORD_BYTES``, a valid name matching its directory. The batch
ids and the size are computed from the copy itself; only the outputs' positions are taken from
the record. A snapshot refused, or one the runner could not take, is recorded FAILED (when it
was asked for) and nothing of it is kept.

A kept snapshot becomes READY (the row asked for, or a new row for one the runner took on its
own), then retention deletes the automatic snapshots beyond ``processing.snapshotsToKeep``.
Directories go only after the transaction that deleted their rows commits.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.formats import SnapshotName
from streamjobs.domain.snapshots import (
    AUTOMATIC_KINDS,
    SNAPSHOT_CHECKPOINT_DIRECTORY,
    SNAPSHOT_RECORD_FILE,
    SNAPSHOTS_DIRECTORY,
    Kept,
    SnapshotKind,
    SnapshotStatus,
    StagedSnapshot,
    to_prune,
)
from streamjobs.domain.spec import parse_manifest
from streamjobs.services.snapshot_files import (
    Refused,
    TreeFacts,
    check_tree,
    is_real_directory,
    move_tree,
    read_record,
    remove_kept,
    remove_tree,
    seal,
)
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.snapshots import SnapshotRecord

_INCOMING_PREFIX = ".incoming-"
_NAME_SYNTAX = get_args(SnapshotName)[1]
_log = logging.getLogger(__name__)


def snapshot_name_error(name: str) -> str | None:
    """Why ``name`` is not a valid snapshot name; None when it is."""
    try:
        _NAME_SYNTAX.check(name)
    except ValueError as error:
        return str(error)
    return None


@dataclass(frozen=True)
class _Staged:
    """One staged snapshot, taken in: its record and checked copy, or why it is refused."""

    name: str
    record: StagedSnapshot | None
    facts: TreeFacts | None
    failure: str | None


class SnapshotCollector:
    """Collects the staged snapshots of applications (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        snapshot_root: Path,
        apps_directory: Path,
        checkpoint_root: str,
    ) -> None:
        self._store = store
        self._clock = clock
        self._root = snapshot_root
        self._apps = apps_directory
        self._checkpoint_root = checkpoint_root

    def collect(self, application_id: str) -> list[SnapshotRecord]:
        """Collect every finished staged snapshot of the application's attempts; the rows that
        became READY or FAILED. Running it again finds nothing more to do."""
        with self._store.reading() as repos:
            application = repos.applications.find(application_id)
            spec = repos.applications.spec(application_id) if application else None
        if application is None or spec is None:
            return []
        keep = self._snapshots_to_keep(spec)
        collected = []
        for staged in _staged_directories(self._apps / application_id):
            record = self._collect_one(application, staged, keep)
            if record is not None:
                collected.append(record)
        return collected

    def _collect_one(
        self, application: ApplicationRecord, staged: Path, keep: int
    ) -> SnapshotRecord | None:
        self._root.mkdir(parents=True, exist_ok=True)
        incoming = self._root / f"{_INCOMING_PREFIX}{uuid.uuid4().hex}"
        try:
            taken = self._take_in(staged, incoming)
            with self._store.reading() as repos:
                before = repos.snapshots.find(application.job_name, taken.name)
            own = before if before is not None and _is_own_request(before, application) else None
            chosen = own.id if own is not None else str(uuid.uuid4())
            if taken.failure is None:
                record, gone = self._keep(application, taken, incoming, chosen, keep)
            else:
                record, gone = self._store_outcome(application, taken, chosen, keep)
        finally:
            remove_tree(incoming)
        for directory in gone:
            remove_kept(self._root, directory)
        return record

    def _keep(
        self,
        application: ApplicationRecord,
        taken: _Staged,
        incoming: Path,
        chosen: str,
        keep: int,
    ) -> tuple[SnapshotRecord | None, list[str]]:
        """Move the checked copy to ``<root>/<chosen>/checkpoint`` and record it; the copy goes
        again unless it was recorded READY."""
        target = self._root / chosen
        remove_tree(target)  # what a collection cut short left
        target.mkdir()
        try:
            copy = SNAPSHOT_CHECKPOINT_DIRECTORY
            os.rename(incoming / copy, target / copy)
            record, gone = self._store_outcome(application, taken, chosen, keep)
        except BaseException:
            remove_tree(target)
            raise
        if record is None or record.status is not SnapshotStatus.READY:
            gone = [*gone, chosen]
        return record, gone

    def _store_outcome(
        self, application: ApplicationRecord, taken: _Staged, chosen: str, keep: int
    ) -> tuple[SnapshotRecord | None, list[str]]:
        def once() -> tuple[SnapshotRecord | None, list[str]]:
            with self._store.transaction() as repos:
                return self._record(repos, application, taken, chosen, keep)

        return retried_on_contention(once)

    def _take_in(self, staged: Path, incoming: Path) -> _Staged:
        """Move the staged directory to ``incoming``, seal it and check it."""
        name = staged.name
        try:
            move_tree(staged, incoming)
        except (Refused, OSError) as error:
            remove_tree(staged)
            return _Staged(name, None, None, f"the staged snapshot was refused: {error}")
        try:
            seal(incoming)
            record = _parsed(read_record(incoming / SNAPSHOT_RECORD_FILE), name)
            if record.error is not None:
                return _Staged(name, record, None, f"the runner could not take it: {record.error}")
            facts = check_tree(incoming / SNAPSHOT_CHECKPOINT_DIRECTORY)
        except (Refused, OSError) as error:
            return _Staged(name, None, None, f"the staged snapshot was refused: {error}")
        return _Staged(name, record, facts, None)

    def _record(
        self,
        repos: Repositories,
        application: ApplicationRecord,
        taken: _Staged,
        chosen: str,
        keep: int,
    ) -> tuple[SnapshotRecord | None, list[str]]:
        """Store how the staged snapshot went; the row and the directories to remove."""
        now = self._clock.now()
        job_name, name = application.job_name, taken.name
        row = repos.snapshots.find(job_name, name)
        own = row if row is not None and _is_own_request(row, application) else None
        if taken.failure is not None or taken.record is None or taken.facts is None:
            failure = taken.failure or "the staged snapshot was incomplete"
            failed = None
            if own is not None and own.status is SnapshotStatus.TAKING:
                failed = repos.snapshots.finish_taking(
                    own.id, status=SnapshotStatus.FAILED, error=failure, taken_at=now
                )
            self._event(repos, application, "snapshot-failed", f"snapshot {name}: {failure}")
            return failed, []
        if row is not None and (own is None or own.id != chosen):
            message = f"snapshot {name}: a snapshot named {name} exists; this one is dropped"
            self._event(repos, application, "snapshot-failed", message)
            return None, []
        record, facts = taken.record, taken.facts
        taken_at = _taken_at(record.taken_at, now)
        values: dict[str, Any] = {
            "status": SnapshotStatus.READY,
            "batches": facts.batches,
            "positions": record.positions,
            "taken_at": taken_at,
            "size_bytes": facts.size_bytes,
            "directory": chosen,
        }
        if own is not None:
            ready = repos.snapshots.update(own.id, error=None, **values)
        else:
            ready = repos.snapshots.add(
                snapshot_id=chosen,
                job_name=job_name,
                name=name,
                kind=record.kind,
                application_id=application.id,
                spec_version=application.job_version,
                requested_at=taken_at,
                **values,
            )
        gone = self._retained(repos, job_name, keep) if ready.kind in AUTOMATIC_KINDS else []
        self._event(repos, application, "snapshot-taken", _taken_message(ready, gone))
        return ready, [directory for _, directory in gone if directory]

    def _retained(
        self, repos: Repositories, job_name: str, keep: int
    ) -> list[tuple[str, str | None]]:
        """Delete the automatic snapshots beyond the newest ``keep``; their names and
        directories."""
        ready = repos.snapshots.list(job_name, statuses=[SnapshotStatus.READY])
        pruned = set(
            to_prune(
                (Kept(each.name, each.kind, each.taken_at or each.requested_at) for each in ready),
                keep=keep,
            )
        )
        gone = []
        for each in ready:
            if each.name in pruned:
                repos.snapshots.delete(each.id)
                gone.append((each.name, each.directory))
        return gone

    def _event(
        self, repos: Repositories, application: ApplicationRecord, kind: str, message: str
    ) -> None:
        at = self._clock.now()
        repos.applications.add_event(application.id, at=at, kind=kind, message=message)

    def _snapshots_to_keep(self, spec: dict[str, Any]) -> int:
        try:
            job = parse_manifest(spec, checkpoint_root=self._checkpoint_root)
        except InvalidInput:
            processing = spec.get("spec", {}).get("processing") or {}
            kept = processing.get("snapshotsToKeep")
            return kept if isinstance(kept, int) and kept > 0 else 3
        return job.spec.processing.snapshots_to_keep


def _staged_directories(application_directory: Path) -> Iterator[Path]:
    """The staged snapshots of an application's attempts that have their record, in order."""
    if not is_real_directory(application_directory):
        return
    for attempt in sorted(os.listdir(application_directory)):
        snapshots = application_directory / attempt / SNAPSHOTS_DIRECTORY
        if not is_real_directory(application_directory / attempt) or not is_real_directory(
            snapshots
        ):
            continue
        for name in sorted(os.listdir(snapshots)):
            staged = snapshots / name
            if os.path.lexists(staged / SNAPSHOT_RECORD_FILE):
                yield staged


def _parsed(text: str, directory_name: str) -> StagedSnapshot:
    """The record of the staged snapshot in ``directory_name``; ``Refused`` saying what is
    wrong with it."""
    try:
        # JSON mode: strict about types, yet enum values come as the strings JSON has
        record = StagedSnapshot.model_validate_json(text)
    except ValidationError as invalid:
        problems = [
            f"{'.'.join(str(part) for part in item['loc']) or 'the record'}: {item['msg']}"
            for item in invalid.errors()
        ]
        raise Refused(f"its record does not parse: {'; '.join(problems[:5])}") from None
    problem = snapshot_name_error(record.name)
    if problem is not None:
        raise Refused(f"its record's name: {problem}")
    if record.name != directory_name:
        raise Refused(
            f"its record is named {record.name!r} but lies in the directory {directory_name!r}"
        )
    if record.kind is SnapshotKind.REPLACED:
        raise Refused("its record's kind 'replaced' is the server's own")
    return record


def _is_own_request(row: SnapshotRecord, application: ApplicationRecord) -> bool:
    """Whether ``row`` is what ``application``'s staged snapshot of its name answers: asked
    of it and not taken yet (TAKING, or FAILED for want of an answer in time)."""
    return row.application_id == application.id and row.status is not SnapshotStatus.READY


def _taken_at(text: str, now: datetime) -> datetime:
    """When the runner says it took the snapshot; ``now`` if that does not parse, has no time
    zone or lies ahead."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return now
    if moment.tzinfo is None or moment.astimezone(UTC) > now:
        return now
    return moment.astimezone(UTC)


def _taken_message(snapshot: SnapshotRecord, gone: list[tuple[str, str | None]]) -> str:
    batches = ", ".join(f"{key} {batch}" for key, batch in sorted(snapshot.batches.items()))
    message = (
        f"snapshot {snapshot.name} ({snapshot.kind}) taken: "
        f"batches {batches or 'none'}, {snapshot.size_bytes} bytes"
    )
    if gone:
        message += f"; retention deleted {', '.join(name for name, _ in gone)}"
    return message
