"""A pipeline run from files to exit code: load and check everything, then start Spark.

Shared by the runner's ``__main__`` (under spark-submit) and ``streamjobs pipeline run``. Every
problem with the manifest, the connections or the secrets is found before the Spark session
starts, and reported with its field path.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO

from pyspark.sql import SparkSession

from streamjobs.domain.clock import SystemClock
from streamjobs.domain.connections import Connection, parse_connection
from streamjobs.domain.datasets import DatasetResolver, secrets_from_environment
from streamjobs.domain.documents import load_documents
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.reports import DriverReport
from streamjobs.domain.spec import (
    StreamingJob,
    parse_manifest,
    resolved_template,
    split_server_fields,
)
from streamjobs.runner import standby
from streamjobs.runner.backlog import BacklogProbe, JvmKafkaTimestamps
from streamjobs.runner.listener import ReportingListener
from streamjobs.runner.pipeline import PipelineRun, RunOutcome
from streamjobs.runner.reporting import HttpReporter, JsonLinesReporter, Reporter
from streamjobs.runner.session import build_session
from streamjobs.runner.watchers import (
    Repeating,
    ask_for_periodic_snapshots,
    send_heartbeats,
    watch_snapshot_requests,
    watch_stop_file,
)

EXIT_INVALID = 2


@dataclass(frozen=True)
class RunRequest:
    """Everything one run needs to know, from the command line and the environment."""

    manifest: str
    connections: str | None = None
    application_id: str | None = None
    report_url: str | None = None
    report_token_file: str | None = None
    master: str | None = None
    checkpoint_root: str | None = None
    until_idle: bool = False
    environment: Mapping[str, str] = field(default_factory=dict)
    stop_file: str | None = None
    """Stop gracefully once this file exists."""
    heartbeat_seconds: float = 10.0
    """How often a driver reporting over HTTP says it is alive."""
    hold_until: datetime | None = None
    """Start the Spark session at once but the queries no sooner than this; a stop asked
    before then ends the run without starting them."""
    snapshot_request_file: str | None = None
    """Take a snapshot when the server writes a request here (``domain.snapshots``)."""
    snapshot_directory: str | None = None
    """Where snapshots are staged; without one, none are taken."""
    standby_promote_file: str | None = None
    """A warm standby: start Spark, warm up, write ``standby_ready_file``, and start nothing
    until the server writes its promotion here (``runner.standby``)."""
    standby_ready_file: str | None = None


@dataclass(frozen=True)
class PreparedRun:
    """A checked job and what resolves its datasets."""

    job: StreamingJob
    connections: dict[str, Connection]
    resolver: DatasetResolver


def prepare(request: RunRequest) -> PreparedRun:
    """Load and check the job, its connections and its secrets; InvalidInput names what is wrong."""
    job = load_job(request.manifest, checkpoint_root=request.checkpoint_root)
    if job.spec.pipeline is None:
        raise InvalidInput(
            [FieldError("spec.application.type", "the runner runs pipeline jobs only")],
            source=request.manifest,
        )
    connections = load_connections(request.connections) if request.connections else {}
    secrets = secrets_from_environment(request.environment, connections.values())
    resolver = DatasetResolver(connections=connections, secrets=secrets)
    try:
        resolver.check(job.spec.pipeline)
    except InvalidInput as error:
        raise InvalidInput(error.errors, source=request.manifest) from None
    return PreparedRun(job=job, connections=connections, resolver=resolver)


def load_job(path: str, *, checkpoint_root: str | None) -> StreamingJob:
    documents = load_documents(_read(path), source=path)
    jobs = [d for d in documents if d.get("kind") == "StreamingJob"]
    if len(jobs) != 1:
        raise InvalidInput([FieldError("", "expected one StreamingJob manifest")], source=path)
    manifest, _ = split_server_fields(jobs[0])
    job = parse_manifest(manifest, checkpoint_root=checkpoint_root, source=path)
    if checkpoint_root is None:
        return job
    return parse_manifest(resolved_template(job, checkpoint_root=checkpoint_root), source=path)


def load_connections(path: str) -> dict[str, Connection]:
    connections = {}
    for document in load_documents(_read(path), source=path):
        if document.get("kind") == "Connection":
            connection = parse_connection(document, source=path)
            connections[connection.metadata.name] = connection
    return connections


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput([FieldError(path, f"cannot be read: {error}")]) from error


def run(
    request: RunRequest,
    *,
    reporter: Reporter | None = None,
    errors: IO[str] | None = None,
    on_started: Callable[[PipelineRun], None] | None = None,
) -> int:
    """Run the pipeline to its end and return the exit code."""
    errors = errors or sys.stderr
    try:
        prepared = prepare(request)
    except InvalidInput as error:
        errors.write(f"error: {error.detail}\n")
        return EXIT_INVALID
    reporter = reporter or _reporter_for(request)
    spark = build_session(
        prepared.job, connections=prepared.connections.values(), master=request.master
    )
    clock = SystemClock()
    pipeline_run = PipelineRun(
        spark,
        prepared.job,
        resolver=prepared.resolver,
        reporter=reporter,
        clock=clock,
        application_id=request.application_id,
        snapshot_directory=Path(request.snapshot_directory) if request.snapshot_directory else None,
    )
    previous = _stop_on_signals(pipeline_run)
    watchers = _stop_file_watchers(request, pipeline_run)
    if request.standby_promote_file:  # before the listener, which must not report its query
        stopped = pipeline_run.stop_requested
        standby.warm_up(spark, prepared.job, prepared.resolver, stopped=stopped, errors=errors)
    probe = _backlog_probe(spark, prepared, reporter, clock)
    listener = ReportingListener(
        reporter,
        clock=clock,
        application_id=request.application_id,
        on_progress=probe.offer if probe else None,
    )
    spark.streams.addListener(listener)
    try:
        promoted, hold_until = _promotion(request, pipeline_run, clock, errors)
        if not promoted:
            outcome = RunOutcome(exit_code=0, stopped=True)  # a standby: it has nothing to stage
        elif hold_until is not None and not pipeline_run.hold(hold_until):
            outcome = RunOutcome(exit_code=0, stopped=True)
            pipeline_run.stage_remaining_snapshots(outcome)
        else:
            watchers += _heartbeats(request, reporter, clock)
            watchers += _snapshot_watchers(request, prepared.job, pipeline_run, clock)
            _report_driver(spark, reporter, clock, request.application_id)
            pipeline_run.start()
            if on_started:
                on_started(pipeline_run)
            outcome = pipeline_run.wait(until_idle=request.until_idle)
            listener.await_terminated(str(query.id) for query in pipeline_run.queries)
    finally:
        for watcher in watchers:
            watcher.cancel()
        _restore_signals(previous)
        spark.streams.removeListener(listener)
        if probe is not None:
            probe.close()
        reporter.close()
    _report_failures(outcome, errors)
    return outcome.exit_code


def _promotion(
    request: RunRequest, pipeline_run: PipelineRun, clock: SystemClock, errors: IO[str]
) -> tuple[bool, datetime | None]:
    """Whether the run goes on, and until when it holds its queries: a (warmed-up) standby says
    it is ready and waits for its promotion, whose ``startAt`` it holds until (the request's
    ``hold_until`` when later); any other run goes on with ``hold_until``."""
    if request.standby_promote_file is None:
        return True, request.hold_until
    stopped = pipeline_run.stop_requested
    if stopped():
        return False, None
    if request.standby_ready_file:
        standby.say_ready(Path(request.standby_ready_file), clock)
    promotion = Path(request.standby_promote_file)
    start_at = standby.await_promotion(promotion, stopped=stopped, clock=clock, errors=errors)
    if start_at is None:
        return False, None
    return True, max(start_at, request.hold_until or start_at)


def _backlog_probe(
    spark: SparkSession, prepared: PreparedRun, reporter: Reporter, clock: SystemClock
) -> BacklogProbe | None:
    """A probe of the Kafka inputs' backlog, for a pipeline that streams from Kafka."""
    kafka_options = _kafka_options(prepared)
    if not kafka_options:
        return None
    broker = JvmKafkaTimestamps(spark.sparkContext._jvm)
    return BacklogProbe(broker, kafka_options, reporter=reporter, clock=clock)


def _kafka_options(prepared: PreparedRun) -> list[dict[str, str]]:
    """The options of the streaming query's Kafka inputs: what the backlog probe asks the
    broker with; none for a batchMode pipeline."""
    pipeline = prepared.job.spec.pipeline
    if pipeline is None or pipeline.batch_mode:
        return []
    found = []
    for index, item in enumerate(pipeline.inputs):
        location = prepared.resolver.source(item, path=f"spec.pipeline.inputs[{index}]")
        if item.is_stream and location.format == "kafka":
            found.append(dict(location.options))
    return found


def _stop_file_watchers(request: RunRequest, pipeline_run: PipelineRun) -> list[Repeating]:
    if not request.stop_file:
        return []
    return [watch_stop_file(Path(request.stop_file), pipeline_run.request_stop)]


def _snapshot_watchers(
    request: RunRequest, job: StreamingJob, pipeline_run: PipelineRun, clock: SystemClock
) -> list[Repeating]:
    """The server's snapshot requests and the periodic ones; they start with the queries (none
    without a directory to stage them in)."""
    if not request.snapshot_directory:
        return []
    watchers = []
    if request.snapshot_request_file:
        path = Path(request.snapshot_request_file)
        watchers.append(watch_snapshot_requests(path, pipeline_run.request_snapshot))
    interval = job.spec.processing.snapshot_interval_millis
    if interval is not None:
        offer = pipeline_run.request_snapshot
        watchers.append(ask_for_periodic_snapshots(offer, clock=clock, interval=interval / 1000))
    return watchers


def _heartbeats(request: RunRequest, reporter: Reporter, clock: SystemClock) -> list[Repeating]:
    """Heartbeats for a driver reporting over HTTP; they start with the queries, so a driver
    holding its queries is not yet seen running."""
    if not request.report_url:
        return []
    beats = send_heartbeats(
        reporter,
        clock=clock,
        application_id=request.application_id,
        interval=request.heartbeat_seconds,
    )
    return [beats]


def _report_driver(
    spark: SparkSession, reporter: Reporter, clock: SystemClock, application_id: str | None
) -> None:
    """Tell where the driver is: Spark's application id and the address of its UI."""
    driver = DriverReport(
        timestamp=clock.now().isoformat(),
        spark_application_id=spark.sparkContext.applicationId,
        ui_url=spark.sparkContext.uiWebUrl,
    )
    about = {"applicationId": application_id} if application_id else {}
    reporter.report({**driver.to_wire(), **about})


def _reporter_for(request: RunRequest) -> Reporter:
    if request.report_url and request.report_token_file:
        token = Path(request.report_token_file).read_text().strip()
        return HttpReporter(request.report_url, token)
    return JsonLinesReporter()


def _report_failures(outcome: RunOutcome, errors: IO[str]) -> None:
    for name, reason in outcome.failures.items():
        errors.write(f"error: query {name!r} failed: {reason}\n")


SignalHandlers = dict[signal.Signals, object]


def _stop_on_signals(pipeline_run: PipelineRun) -> SignalHandlers:
    previous: SignalHandlers = {}
    for number in (signal.SIGTERM, signal.SIGINT):
        # Outside the main thread signals cannot be caught: the caller stops the run itself.
        with contextlib.suppress(ValueError):
            previous[number] = signal.signal(number, lambda *_: pipeline_run.request_stop())
    return previous


def _restore_signals(previous: SignalHandlers) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)  # type: ignore[arg-type]
