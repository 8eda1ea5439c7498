"""Snapshots the runner takes of its pipeline's checkpoint, each at a batch boundary.

Requests come from three places (``domain.snapshots``): the server's ``snapshot-request`` file,
a graceful stop's stop file, and the runner's own timer (``processing.snapshotIntervalMillis``).
Each lands in a ``SnapshotInbox``; only the thread that watches the queries (``PipelineRun``)
takes requests out, between two looks at its queries, so a query held for a snapshot is never
taken for one that ended. It holds the queries (each stops after its micro-batch in flight), has
the ``SnapshotStager`` copy the checkpoint and read where each output stands, and starts them
again; a stop's snapshot is taken once the queries have stopped for good.

A staged snapshot is ``<directory>/<name>/checkpoint/`` (the whole checkpoint location, links
copied as links) and ``<directory>/<name>/snapshot.json`` (a ``StagedSnapshot``), written last
under a temporary name and then renamed, so the server collects only complete ones. One that
cannot be taken leaves only a record with its ``error``, and the run goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from streamjobs.domain.clock import Clock
from streamjobs.domain.datasets import SparkSink
from streamjobs.domain.formats import SnapshotName
from streamjobs.domain.locations import LocationError, local_path
from streamjobs.domain.manifest import Guarantee, OutputFormat, StreamingJob
from streamjobs.domain.snapshots import (
    SNAPSHOT_CHECKPOINT_DIRECTORY,
    SNAPSHOT_RECORD_FILE,
    OutputPosition,
    SnapshotKind,
    SnapshotRequest,
    StagedSnapshot,
    last_batch,
)
from streamjobs.runner.positions import query_id, read_position
from streamjobs.runner.query_control import error_text
from streamjobs.runner.sinks import ICEBERG_BATCH_PROPERTY

_SNAPSHOT_NAME: TypeAdapter[str] = TypeAdapter(SnapshotName)
_MAX_ERROR_CHARACTERS = 4000
"""A failed query's error can carry a whole trace; the record keeps its beginning."""
_COPY_ATTEMPTS = 2
"""A file Spark removes while it is copied (old state files) fails a copy; the next one sees the
directory as it is then."""


class SnapshotInbox:
    """Snapshot requests waiting for the thread that watches the queries; safe from any thread.

    Each name is taken once, however often it is offered; a periodic request waits only when no
    other periodic one does (a slow copy does not pile them up); a name that is not a valid
    snapshot name is dropped, as there is nowhere safe to record it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[SnapshotRequest] = []
        self._at_stop: SnapshotRequest | None = None
        self._names: set[str] = set()

    def offer(self, request: SnapshotRequest) -> bool:
        """Queue ``request``; False when it is not queued."""
        with self._lock:
            if not self._admits(request):
                return False
            periodic = SnapshotKind.PERIODIC
            if request.kind is periodic and any(w.kind is periodic for w in self._waiting):
                return False
            self._names.add(request.name)
            self._waiting.append(request)
            return True

    def offer_at_stop(self, request: SnapshotRequest) -> None:
        """Keep ``request`` for when the queries have stopped."""
        with self._lock:
            if self._admits(request):
                self._names.add(request.name)
                self._at_stop = request

    def waiting(self) -> bool:
        with self._lock:
            return bool(self._waiting)

    def take(self) -> list[SnapshotRequest]:
        """The requests waiting, oldest first; they are no longer waiting."""
        with self._lock:
            taken, self._waiting = self._waiting, []
            return taken

    def take_at_end(self) -> list[SnapshotRequest]:
        """Once the queries have stopped for good: the stop's request and those still waiting
        that someone asked for (a periodic one left over is dropped)."""
        with self._lock:
            taken = [r for r in self._waiting if r.kind is not SnapshotKind.PERIODIC]
            if self._at_stop is not None:
                taken.append(self._at_stop)
            self._waiting, self._at_stop = [], None
            return taken

    def _admits(self, request: SnapshotRequest) -> bool:
        if request.name in self._names:
            return False
        try:
            _SNAPSHOT_NAME.validate_python(request.name)
        except ValidationError:
            return False
        return True


@dataclass(frozen=True)
class TrackedOutput:
    """An output as a snapshot records its position."""

    key: str
    """Also the checkpoint sub-directory of its query, when it has one of its own."""
    sink: SparkSink
    writer_id: str | None = None
    """The Delta ``txnAppId`` of the writer when the runner writes each batch itself
    (``forEachBatchMode``); None: Delta's streaming sink, which uses the query's id."""


def refusal_for(job: StreamingJob) -> str | None:
    """Why no snapshot of ``job``'s runs can be taken; None when they can."""
    pipeline = job.spec.pipeline
    if pipeline is None or pipeline.batch_mode:
        return "a batchMode pipeline keeps no checkpoint"
    if job.spec.processing.guarantee is Guarantee.NONE:
        return "guarantee NONE keeps no checkpoint"
    location = pipeline.streaming.checkpoint_location
    if location is None:
        return "the pipeline has no checkpoint location"
    if _local(location) is None:
        return f"the checkpoint location {location} is not on this machine's file system"
    return None


class SnapshotStager:
    """Stages snapshots of one pipeline's checkpoint in ``directory``, while its queries are
    held (the caller's part)."""

    def __init__(
        self,
        spark: SparkSession,
        job: StreamingJob,
        *,
        directory: Path,
        outputs: Sequence[TrackedOutput],
        clock: Clock,
    ) -> None:
        assert job.spec.pipeline is not None
        self._spark = spark
        self._directory = directory
        self._outputs = outputs
        self._clock = clock
        self.refusal = refusal_for(job)
        """Why none can be taken (then the queries need not be held); None when they can."""
        location = job.spec.pipeline.streaming.checkpoint_location
        local = _local(location) if location else None
        self._checkpoint = Path(local) if local else None
        self._last_batches: dict[str, int] | None = None
        """The batches of the last snapshot this run staged."""

    def nothing_new_for(self, requests: Sequence[SnapshotRequest]) -> bool:
        """Whether ``requests`` are all periodic and no batch was committed since the last
        snapshot (or none at all yet): then the queries are not held for them. Were they held,
        a query whose batches take longer than the interval would be stopped again before it
        commits one, for ever."""
        if self._checkpoint is None or self.refusal is not None:
            return False
        if any(request.kind is not SnapshotKind.PERIODIC for request in requests):
            return False
        batches = _batches(self._checkpoint)
        return not batches or batches == self._last_batches

    def stage_all(
        self, requests: Sequence[SnapshotRequest], *, failures: Mapping[str, str] = {}
    ) -> None:
        """Stage each of ``requests``, or its error: this run's refusal, or the ``failures``
        of its queries (by name), after which no checkpoint is taken to be consistent."""
        for request in requests:
            if self.refusal is not None:
                self._fail(request, self.refusal)
            elif failures:
                failed = "; ".join(f"{name}: {reason}" for name, reason in failures.items())
                self._fail(request, f"a query failed: {failed}")
            else:
                self._stage(request)

    def _stage(self, request: SnapshotRequest) -> None:
        assert self._checkpoint is not None
        if request.kind is SnapshotKind.PERIODIC and not _batches(self._checkpoint):
            return  # no batch committed yet: nothing to keep, and nobody waits for this one
        target = self._directory / request.name
        if (target / SNAPSHOT_RECORD_FILE).exists():
            return  # staged already, perhaps collected meanwhile: never replaced
        copy = target / SNAPSHOT_CHECKPOINT_DIRECTORY
        try:
            _copy(self._checkpoint, copy)
            staged = StagedSnapshot(
                name=request.name,
                kind=request.kind,
                taken_at=self._clock.now().isoformat(),
                batches=_batches(copy),
                positions=[self._position(output, copy) for output in self._outputs],
            )
        except Exception as error:
            shutil.rmtree(copy, ignore_errors=True)
            self._fail(request, error_text(error))
            return
        self._record(target, staged)
        self._last_batches = staged.batches

    def _fail(self, request: SnapshotRequest, reason: str) -> None:
        staged = StagedSnapshot(
            name=request.name,
            kind=request.kind,
            taken_at=self._clock.now().isoformat(),
            batches={},
            positions=[],
            error=reason[:_MAX_ERROR_CHARACTERS],
        )
        self._record(self._directory / request.name, staged)

    def _record(self, target: Path, staged: StagedSnapshot) -> None:
        """Write ``snapshot.json`` under a temporary name, then rename it: last, and whole."""
        try:
            target.mkdir(parents=True, exist_ok=True)
            temporary = target / f".{SNAPSHOT_RECORD_FILE}.partial"
            temporary.write_text(json.dumps(staged.to_wire()), encoding="utf-8")
            os.replace(temporary, target / SNAPSHOT_RECORD_FILE)
        except OSError as error:
            sys.stderr.write(f"error: cannot stage snapshot {staged.name!r}: {error}\n")
            return
        outcome = f"failed: {staged.error}" if staged.error else f"staged at {staged.batches}"
        sys.stderr.write(f"snapshot {staged.name!r} ({staged.kind}) {outcome}\n")

    def _position(self, output: TrackedOutput, copy: Path) -> OutputPosition:
        """Where ``output`` stands now, its query held at the batch the copy ends with."""
        key, sink = output.key, output.sink
        if sink.format == OutputFormat.ICEBERG:
            return self._iceberg_position(key, sink)
        path = _local(sink.path) if sink.path else None
        if sink.format == OutputFormat.DELTA and path is None and sink.table:
            path = self._delta_table_path(sink.table)
            if path is None:
                return OutputPosition(output=key, format=sink.format)
        app_id = output.writer_id
        if sink.format == OutputFormat.DELTA and app_id is None:
            app_id = query_id(str(copy / key))
        return read_position(key, sink.format, path, txn_app_id=app_id)

    def _iceberg_position(self, key: str, sink: SparkSink) -> OutputPosition:
        """The table's newest snapshot and the batch marker the runner's writer put on it."""
        if sink.table is None:
            return OutputPosition(output=key, format=sink.format, tracked=False)
        query = (
            f"SELECT snapshot_id, summary['{ICEBERG_BATCH_PROPERTY}'] AS marker "
            f"FROM {sink.table}.snapshots ORDER BY committed_at DESC LIMIT 1"
        )
        try:
            newest = self._spark.sql(query).first()
        except AnalysisException:  # no table yet: nothing written
            newest = None
        if newest is None:
            return OutputPosition(output=key, format=sink.format)
        return OutputPosition(
            output=key,
            format=sink.format,
            snapshot_id=int(newest["snapshot_id"]),
            batch_marker=newest["marker"],
        )

    def _delta_table_path(self, table: str) -> str | None:
        """The local directory of a Delta table named in the catalog; None before it exists."""
        try:
            detail = self._spark.sql(f"DESCRIBE DETAIL {table}").first()
        except AnalysisException:
            return None
        return _local(detail["location"]) if detail is not None else None


def _copy(checkpoint: Path, copy: Path) -> None:
    """Copy the checkpoint location, links as links (none is followed out of it)."""
    if checkpoint.is_symlink() or not checkpoint.is_dir():
        raise FileNotFoundError(f"the checkpoint {checkpoint} holds nothing yet: no batch has run")
    for attempt in range(1, _COPY_ATTEMPTS + 1):
        shutil.rmtree(copy, ignore_errors=True)
        try:
            shutil.copytree(checkpoint, copy, symlinks=True)
            return
        except shutil.Error:
            if attempt == _COPY_ATTEMPTS:
                raise


def _batches(checkpoint: Path) -> dict[str, int]:
    """The last committed batch of each query whose checkpoint is a sub-directory of
    ``checkpoint`` (a checkpoint location, or a copy of one)."""
    batches: dict[str, int] = {}
    if checkpoint.is_symlink() or not checkpoint.is_dir():
        return batches
    for query in sorted(checkpoint.iterdir()):
        commits = query / "commits"
        if query.is_symlink() or commits.is_symlink() or not commits.is_dir():
            continue
        batch = last_batch(os.listdir(commits))
        if batch is not None:
            batches[query.name] = batch
    return batches


def _local(location: str) -> str | None:
    """The local path of ``location``; None for one elsewhere (or not a location at all)."""
    try:
        return local_path(location)
    except LocationError:
        return None
