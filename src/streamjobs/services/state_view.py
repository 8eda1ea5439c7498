"""A look inside a pipeline application's state: its stateful operators with their figures, and a
preview of one operator's first keys and values, for whoever may view the job.

The figures come from the latest progress reports the server keeps; what the checkpoint holds
(each operator's id, state stores, partitions and the batches its state covers, and a preview)
takes Spark, so the ``state`` tool reads it in a short sandboxed batch job
(``domain.state_inspection``, run through a ``ToolRunner``). The checkpoint is bound read-only
into the tool's sandbox and read where it lies: Spark's state sources only read, the bind makes
sure, and a copy of a large state would cost more than the read.

Answers are kept briefly per application, its queries' latest batches and the preview asked
for, so a page that asks again does not start Spark again; one read per key runs at a time (the
others wait for its answer), and at most ``max_reads`` at once. A tool that fails, times out or
answers nonsense is a ``StateUnreadable`` (409) saying why; never a 500.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict, InvalidInput
from streamjobs.domain.jar_requests import jar_request
from streamjobs.domain.locations import LocationError, local_path
from streamjobs.domain.manifest import Guarantee, StreamingJob
from streamjobs.domain.reports import ProgressReport
from streamjobs.domain.spec import parse_manifest
from streamjobs.domain.state_figures import (
    LatestProgress,
    QueryFigures,
    latest_by_query,
    state_figures,
)
from streamjobs.domain.state_inspection import (
    TOOL,
    InspectionResult,
    Preview,
    PreviewRequest,
    UnreadableResult,
    parse_result,
    tool_arguments,
)
from streamjobs.launch.base import LaunchFailed
from streamjobs.launch.jars import JarResolver
from streamjobs.launch.tool_runs import ToolResult, ToolRun, ToolRunner
from streamjobs.services.access import require_job
from streamjobs.services.application_reads import visible_application
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Store

PROGRESS_READ = 200
"""How many of the newest progress reports are searched for each query's latest."""
_STDERR_LINES = 5
_log = logging.getLogger(__name__)


class StateUnreadable(Conflict):
    """The checkpoint's state could not be read now: the tool failed, timed out, refused what
    was asked or too many reads run already; the detail says which."""

    title = "State unreadable"


@dataclass(frozen=True)
class StateOverview:
    """What the State view shows of one application."""

    application: ApplicationRecord
    checkpoint: str
    """The checkpoint's URI, as the application runs with it."""
    queries: tuple[QueryFigures, ...]
    read_at: datetime | None
    """When the checkpoint was read; None when the figures come from the reports alone."""
    preview: Preview | None = None


class _Target(NamedTuple):
    """An application whose checkpoint can be read, and what its reports say."""

    application: ApplicationRecord
    job: StreamingJob
    checkpoint: str
    directory: Path
    progress: dict[str, LatestProgress]


@dataclass(frozen=True)
class _Answer:
    result: InspectionResult
    read_at: datetime


class StateView:
    """Reads applications' state for those who may view their jobs (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        tools: ToolRunner,
        work_root: Path,
        jars: JarResolver | None = None,
        timeout_seconds: float = 120.0,
        keep_seconds: float = 30.0,
        max_reads: int = 2,
    ) -> None:
        """``work_root`` holds each read's fresh work directory (removed after it); ``jars``
        knows the jobs' resolved connector jars; ``timeout_seconds`` bounds one read; answers
        are kept ``keep_seconds``."""
        self._store = store
        self._clock = clock
        self._tools = tools
        self._work_root = work_root
        self._jars = jars
        self._timeout = timeout_seconds
        self._keep = timedelta(seconds=keep_seconds)
        self._reads = threading.BoundedSemaphore(max_reads)
        self._max_reads = max_reads
        self._answers: dict[tuple[object, ...], _Answer] = {}
        self._key_locks: dict[tuple[object, ...], threading.Lock] = {}
        self._lock = threading.Lock()

    def figures(self, application_id: str, *, actor: Actor) -> StateOverview:
        """The operators as the latest progress reports give them, without reading the
        checkpoint (fast): what the view shows when the checkpoint cannot be read."""
        target = self._target(application_id, actor)
        figures = state_figures(target.progress, None)
        return StateOverview(target.application, target.checkpoint, tuple(figures), None)

    def describe(
        self, application_id: str, *, actor: Actor, preview: PreviewRequest | None = None
    ) -> StateOverview:
        """Each query's operators with their figures and what the checkpoint holds of them,
        and ``preview`` when asked. VIEW on the job (else ``NotFound``); ``Conflict`` for an
        application without a checkpoint to read; ``StateUnreadable`` when reading failed."""
        target = self._target(application_id, actor)
        answer = self._answer(target, preview)
        figures = state_figures(target.progress, answer.result.queries)
        return StateOverview(
            application=target.application,
            checkpoint=target.checkpoint,
            queries=tuple(figures),
            read_at=answer.read_at,
            preview=answer.result.preview,
        )

    def shown_application(self, job_name: str, *, actor: Actor) -> ApplicationRecord | None:
        """The application a job's State tab shows: its newest (the live one when there is one;
        the checkpoint holds its state). None before the first run. VIEW on the job."""
        with self._store.reading() as repos:
            job = repos.jobs.get(job_name)
            require_job(repos, actor, job.name, job.bundle, JobAction.VIEW)
            newest, _ = repos.applications.list(job_name=job_name, limit=1)
        return newest[0] if newest else None

    def _target(self, application_id: str, actor: Actor) -> _Target:
        with self._store.reading() as repos:
            application = visible_application(repos, actor, application_id)
            newest, _ = repos.applications.list(job_name=application.job_name, limit=1)
            spec = repos.applications.spec(application_id)
            records = repos.applications.progress(application_id, limit=PROGRESS_READ)
        if newest and newest[0].id != application.id:
            raise Conflict(
                f"the checkpoint of job {application.job_name!r} now holds the state of its "
                f"newer application {newest[0].name}, not of {application.name}: look at that one"
            )
        job = _job_of(application, spec)
        checkpoint, directory = _checkpoint_of(application, job)
        reports = []
        for record in records:
            if record.type == "progress":
                with contextlib.suppress(ValidationError):
                    reports.append((ProgressReport.model_validate(record.payload), record.at))
        progress = latest_by_query(job.metadata.name, reports)
        return _Target(application, job, checkpoint, directory, progress)

    def _answer(self, target: _Target, preview: PreviewRequest | None) -> _Answer:
        batches = tuple(
            sorted((key, item.report.progress.batch_id) for key, item in target.progress.items())
        )
        key = (target.application.id, target.checkpoint, batches, preview)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            kept = self._kept(key)
            if kept is not None:
                return kept
            try:
                answer = _Answer(self._read(target, preview), self._clock.now())
                with self._lock:
                    self._forget_old()
                    self._answers[key] = answer
            finally:
                with self._lock:
                    self._key_locks.pop(key, None)
            return answer

    def _kept(self, key: tuple[object, ...]) -> _Answer | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None and self._clock.now() - answer.read_at <= self._keep:
                return answer
        return None

    def _forget_old(self) -> None:
        now = self._clock.now()
        for key in [key for key, item in self._answers.items() if now - item.read_at > self._keep]:
            del self._answers[key]

    def _read(self, target: _Target, preview: PreviewRequest | None) -> InspectionResult:
        if not self._reads.acquire(blocking=False):
            raise StateUnreadable(
                f"{self._max_reads} reads of jobs' state are running already; try again in a moment"
            )
        try:
            with self._work_directory() as directory:
                run = ToolRun(
                    tool=TOOL,
                    job=target.job,
                    arguments=tool_arguments(str(target.directory), preview),
                    directory=directory,
                    readable=[str(target.directory)],
                    writable=[],
                    timeout_seconds=self._timeout,
                    run_as=target.application.run_as,
                    packaged_jars=self._packaged_jars(target.job),
                )
                outcome = self._tools.run(run)
        except LaunchFailed as failed:
            raise StateUnreadable(
                f"the state of {target.application.name} could not be read: {failed.detail}"
            ) from None
        finally:
            self._reads.release()
        return _result_of(outcome, target, self._timeout)

    def _packaged_jars(self, job: StreamingJob) -> tuple[str, ...] | None:
        """The job's resolved connector jars, as its driver is given them (its Spark settings
        name their classes); None: the tool resolves them itself."""
        request = jar_request(job)
        if self._jars is None or request.empty:
            return None
        known = self._jars.known(request)
        return known.jars if known is not None and known.error is None else None

    @contextlib.contextmanager
    def _work_directory(self) -> Iterator[Path]:
        directory = self._work_root / f"state-{uuid.uuid4().hex}"
        directory.mkdir(parents=True)
        try:
            yield directory
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def _result_of(outcome: ToolResult, target: _Target, timeout: float) -> InspectionResult:
    """The tool's answer, or ``StateUnreadable`` saying why there is none."""
    name = target.application.name
    if outcome.timed_out:
        raise StateUnreadable(
            f"reading the state of {name} took longer than {timeout:g} seconds and was stopped; "
            "try again later, or preview fewer rows"
        )
    if outcome.result is not None or outcome.exit_code == 0:
        try:
            result = parse_result(outcome.result)
        except UnreadableResult as unreadable:
            raise StateUnreadable(f"the state of {name} could not be read: {unreadable}") from None
        if result.error:
            raise StateUnreadable(f"the state of {name} could not be read: {result.error}")
        if outcome.exit_code == 0:
            return result
    tail = "\n".join(outcome.stderr_tail.strip().splitlines()[-_STDERR_LINES:])
    raise StateUnreadable(
        f"the state of {name} could not be read: the reading job ended with exit code "
        f"{outcome.exit_code}" + (f":\n{tail}" if tail else "")
    )


def _job_of(application: ApplicationRecord, spec: dict[str, object]) -> StreamingJob:
    try:
        return parse_manifest(spec)
    except InvalidInput as invalid:
        raise Conflict(
            f"the manifest {application.name} ran with no longer passes validation, so its "
            f"checkpoint is not read: {invalid.detail}"
        ) from None


def _checkpoint_of(application: ApplicationRecord, job: StreamingJob) -> tuple[str, Path]:
    """The checkpoint's URI and local directory; ``Conflict`` saying why there is none."""
    name = application.name
    pipeline = job.spec.pipeline
    if pipeline is None:
        kind = job.spec.application.type.value
        raise Conflict(f"{name} runs a {kind} application, not a pipeline: its state is its own")
    if pipeline.batch_mode:
        raise Conflict(f"{name} runs a batch pipeline, which keeps no state")
    location = pipeline.streaming.checkpoint_location
    if job.spec.processing.guarantee is Guarantee.NONE or location is None:
        raise Conflict(
            f"{name} keeps no checkpoint (spec.processing.guarantee is NONE), so no state to read"
        )
    try:
        path = local_path(location)
    except LocationError:
        path = None
    if path is None:
        raise Conflict(f"the checkpoint {location} of {name} is not on this server's disk")
    directory = Path(path)
    if not directory.is_dir():
        raise Conflict(
            f"the checkpoint {location} of {name} does not exist yet: no batch has been committed"
        )
    return location, directory
