"""One run of a declared pipeline: its views, its queries, and how the run ends.

Inputs and steps become temp views. Each output then gets a streaming query with its own
checkpoint sub-directory (``<checkpoint>/<output>``) — or, in ``forEachBatchMode``, one query runs
the steps on each micro-batch of the streaming input and writes every output from it, the batch
computed once and persisted while it is written. ``wait`` watches the queries until they finish,
fail, go idle (when asked) or are told to stop, which they do after the micro-batch in flight.
Between two looks at the queries, the same thread takes the snapshots asked for
(``runner.snapshots``): it holds the queries at a batch boundary, stages a copy of the
checkpoint, and starts them again. Each output's query runs in a scheduler pool of its own.

A ``batchMode`` pipeline starts no query: ``wait`` reads the inputs once, writes each output once
by its ``saveMode`` and returns; a stop asked meanwhile ends it before the next output.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamjobs.domain.clock import Clock
from streamjobs.domain.datasets import DatasetResolver
from streamjobs.domain.manifest import Guarantee, Input, InputFormat, Pipeline, StreamingJob
from streamjobs.domain.reports import BadRecordsReport, PlanReport, WrittenReport
from streamjobs.domain.snapshots import SnapshotRequest
from streamjobs.runner.explain import plan_text
from streamjobs.runner.output_plan import PlannedOutput, planned_outputs
from streamjobs.runner.pools import scheduler_pool
from streamjobs.runner.query_control import (
    error_text,
    failures,
    is_idle,
    stop_after_current_batch,
)
from streamjobs.runner.reporting import Reporter
from streamjobs.runner.session import mask_secret_options
from streamjobs.runner.sinks import QuerySettings, start_query, write_batch, write_once
from streamjobs.runner.snapshots import SnapshotInbox, SnapshotStager, TrackedOutput
from streamjobs.runner.sources import InputFrames, read_input, read_raw, split_kafka_json
from streamjobs.runner.triggers import with_trigger

FOR_EACH_BATCH_QUERY = "foreachBatch"


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: exit code 0 (finished or stopped) or 1, and the failed queries' reasons."""

    exit_code: int
    failures: dict[str, str] = field(default_factory=dict)
    stopped: bool = False


class PipelineRun:
    """Runs one pipeline job's queries on a Spark session."""

    def __init__(
        self,
        spark: SparkSession,
        job: StreamingJob,
        *,
        resolver: DatasetResolver,
        reporter: Reporter,
        clock: Clock,
        application_id: str | None = None,
        snapshot_directory: Path | None = None,
    ) -> None:
        """``snapshot_directory``: where snapshots are staged; None: none are taken."""
        assert job.spec.pipeline is not None
        mask_secret_options(spark)
        self._spark = spark
        self._job = job
        self._pipeline: Pipeline = job.spec.pipeline
        self._resolver = resolver
        self._reporter = reporter
        self._clock = clock
        self._application_id = application_id or job.name
        self._outputs = planned_outputs(self._pipeline, self._resolver)
        self._queries: list[StreamingQuery] = []
        self._triggered: set[StreamingQuery] = set()
        """The queries known to have run a trigger."""
        self._stop_requested = threading.Event()
        self._scratch: str | None = None
        self._snapshots = SnapshotInbox()
        self._stager = self._snapshot_stager(snapshot_directory) if snapshot_directory else None

    @property
    def queries(self) -> list[StreamingQuery]:
        return list(self._queries)

    def explain(self) -> str:
        """The plans of every output's query, without starting any."""
        bad_records = self._define_views()
        sections = []
        for planned in self._outputs:
            frame = self._output_frame(planned, bad_records.get(planned.output.name))
            plan = plan_text(frame, secrets=self._resolver.secret_values)
            sections.append(f"== {planned.key} -> {planned.sink.where} ==\n{plan}")
        return "\n".join(sections)

    def start(self) -> list[StreamingQuery]:
        """Start the pipeline's queries (none for a batch job, which ``wait`` runs)."""
        if self._pipeline.batch_mode:
            return []
        if self._pipeline.streaming.for_each_batch_mode:
            self._queries = [self._start_for_each_batch()]
        else:
            bad_records = self._define_views()
            for planned in self._outputs:
                self._start_output(planned, bad_records.get(planned.output.name))
        return self.queries

    def hold(self, until: datetime, *, poll_seconds: float = 0.2) -> bool:
        """Wait until ``until`` before the queries start (a restart's retry interval, which the
        driver spends starting up); False when a stop is asked first.

        It sleeps rather than waiting on the stop event: a signal handler setting the event
        while this thread holds the event's lock in ``wait`` would deadlock."""
        while not self._stop_requested.is_set():
            left = (until - self._clock.now()).total_seconds()
            if left <= 0:
                return True
            time.sleep(min(left, poll_seconds))
        return False

    def request_stop(self, snapshot: SnapshotRequest | None = None) -> None:
        """Ask the run to stop after the micro-batch in flight, then take ``snapshot`` (safe
        from a signal handler when there is none)."""
        if snapshot is not None and self._stager is not None:
            self._snapshots.offer_at_stop(snapshot)
        self._stop_requested.set()

    def stop_requested(self) -> bool:
        """Whether a stop has been asked (by a signal, the stop file or the caller)."""
        return self._stop_requested.is_set()

    def request_snapshot(self, request: SnapshotRequest) -> bool:
        """Ask for a snapshot at the next batch boundary; False when it will not be taken (its
        name was asked for before, or this run stages none)."""
        return self._stager is not None and self._snapshots.offer(request)

    def wait(self, *, until_idle: bool = False, poll_seconds: float = 0.2) -> RunOutcome:
        """Watch the queries until they all finish, one fails, or the run is told to stop; a
        batch job is run here, to its end."""
        if self._pipeline.batch_mode:
            outcome = self._write_once()
        else:
            try:
                outcome = self._watch(until_idle=until_idle, poll_seconds=poll_seconds)
            finally:
                if self._scratch is not None:
                    shutil.rmtree(self._scratch, ignore_errors=True)
        self.stage_remaining_snapshots(outcome)
        return outcome

    def stage_remaining_snapshots(self, outcome: RunOutcome) -> None:
        """Once the queries have stopped for good: take the stop's snapshot (aligned: every
        output at the batch the run stopped after) and those asked for and not yet taken."""
        if self._stager is not None:
            self._stager.stage_all(self._snapshots.take_at_end(), failures=outcome.failures)

    def _watch(self, *, until_idle: bool, poll_seconds: float) -> RunOutcome:
        while True:
            if self._stop_requested.is_set():
                return self._stopped()
            if self._snapshots.waiting():
                outcome = self._take_snapshots()
                if outcome is not None:
                    return outcome
            active = [query for query in self._queries if query.isActive]
            failed = failures(query for query in self._queries if query not in active)
            if failed:
                self._stop_after_current_batch()
                return RunOutcome(exit_code=1, failures=failed)
            if not active:
                return RunOutcome(exit_code=0)
            if until_idle and all(is_idle(query, self._triggered) for query in active):
                return self._stopped()
            time.sleep(poll_seconds)

    def _stopped(self) -> RunOutcome:
        """Stop the queries after their micro-batches in flight; a query that failed meanwhile
        still fails the run."""
        self._stop_after_current_batch()
        failed = failures(self._queries)
        if failed:
            return RunOutcome(exit_code=1, failures=failed)
        return RunOutcome(exit_code=0, stopped=True)

    def _take_snapshots(self) -> RunOutcome | None:
        """Hold the queries (each stops after its micro-batch in flight), stage the snapshots
        asked for, and start the queries again; an outcome when the run ends instead."""
        assert self._stager is not None, "requests are queued only when snapshots are staged"
        requests = self._snapshots.take()
        if self._stager.nothing_new_for(requests):
            return None
        if self._stager.refusal is not None:
            self._stager.stage_all(requests)
            return None
        running = any(query.isActive for query in self._queries)
        self._stop_after_current_batch()
        failed = failures(self._queries)
        self._stager.stage_all(requests, failures=failed)
        if failed:
            return RunOutcome(exit_code=1, failures=failed)
        if not running:  # they had all finished (Once, AvailableNow): none runs again
            return None
        self._queries, self._triggered = [], set()
        try:
            self.start()
        except Exception as error:
            self._stop_after_current_batch()
            return RunOutcome(exit_code=1, failures={self._job.name: error_text(error)})
        return None

    def _write_once(self) -> RunOutcome:
        """Read the inputs and write every output once; the first output that fails ends the
        run with its error."""
        try:
            bad_records = self._define_views()
        except Exception as error:
            return RunOutcome(exit_code=1, failures={self._job.name: error_text(error)})
        for planned in self._outputs:
            if self._stop_requested.is_set():
                return RunOutcome(exit_code=0, stopped=True)
            frame = self._output_frame(planned, bad_records.get(planned.output.name))
            if self._pipeline.explain:
                self._report_plan(planned.key, frame)
            if self._pipeline.show_preview_lines:
                frame.show(self._pipeline.show_preview_lines, truncate=False)
            try:
                write_once(frame, planned.output, planned.sink)
            except Exception as error:
                failure = {self._output_name(planned): error_text(error)}
                return RunOutcome(exit_code=1, failures=failure)
            self._report(WrittenReport(output=planned.key, where=planned.sink.where))
        return RunOutcome(exit_code=0)

    def _output_name(self, planned: PlannedOutput) -> str:
        return f"{self._job.name}/{planned.key}"

    def _define_views(self) -> dict[str, DataFrame]:
        """Register every input and step as a temp view; returns the bad-record frames by output."""
        bad_records: dict[str, DataFrame] = {}
        for index, item in enumerate(self._pipeline.inputs):
            location = self._resolver.source(item, path=f"spec.pipeline.inputs[{index}]")
            frames = read_input(self._spark, item, location, batch=self._pipeline.batch_mode)
            frames.view.createOrReplaceTempView(item.name)
            if frames.bad_records is not None and item.bad_records is not None:
                bad_records[item.bad_records.output] = frames.bad_records
        self._define_steps(self._spark)
        return bad_records

    def _define_steps(self, spark: SparkSession) -> None:
        for step in self._pipeline.steps:
            for view in step.sequence:
                spark.sql(view.sql).createOrReplaceTempView(view.name)

    def _checkpoint(self, key: str) -> str | None:
        """``<checkpoint>/<key>``; under guarantee NONE a scratch directory the run deletes."""
        location = self._pipeline.streaming.checkpoint_location
        if self._job.spec.processing.guarantee is Guarantee.NONE or location is None:
            if self._scratch is None:
                self._scratch = tempfile.mkdtemp(prefix=f"streamjobs-{self._job.name}-")
            location = self._scratch
        return location.rstrip("/") + "/" + key

    def _snapshot_stager(self, directory: Path) -> SnapshotStager:
        by_batch = self._pipeline.streaming.for_each_batch_mode
        outputs = [
            TrackedOutput(p.key, p.sink, writer_id=self._writer_id(p) if by_batch else None)
            for p in self._outputs
        ]
        return SnapshotStager(
            self._spark, self._job, directory=directory, outputs=outputs, clock=self._clock
        )

    def _writer_id(self, planned: PlannedOutput) -> str:
        """Names an output's writer across runs and applications of the job, so a micro-batch
        replayed from the checkpoint after a restart is recognised as already written."""
        return f"{self._job.metadata.namespace}/{self._job.name}/{planned.key}"

    def _output_frame(self, planned: PlannedOutput, bad_records: DataFrame | None) -> DataFrame:
        """What the output writes: its view, or the bad records it was named to receive."""
        return bad_records if bad_records is not None else self._spark.table(planned.output.name)

    def _start_output(
        self, planned: PlannedOutput, bad_records: DataFrame | None
    ) -> StreamingQuery:
        frame = self._output_frame(planned, bad_records)
        if self._pipeline.explain:
            self._report_plan(planned.key, frame)
        settings = QuerySettings(
            name=self._output_name(planned),
            streaming=self._pipeline.streaming,
            checkpoint=self._checkpoint(planned.key),
        )
        with scheduler_pool(self._spark, planned.key):
            query = start_query(
                frame, planned.output, planned.sink, settings, writer_id=self._writer_id(planned)
            )
            self._queries.append(query)
            if self._pipeline.show_preview_lines:
                self._start_preview(planned.key, frame)
        return query

    def _start_preview(self, key: str, frame: DataFrame) -> None:
        """A console query that shows the first rows of each micro-batch (no checkpoint)."""
        writer = frame.writeStream.format("console").queryName(f"{self._job.name}/{key}/preview")
        writer = writer.option("numRows", self._pipeline.show_preview_lines).option(
            "truncate", "false"
        )
        self._queries.append(with_trigger(writer, self._pipeline.streaming).start())

    def _start_for_each_batch(self) -> StreamingQuery:
        streamed = [item for item in self._pipeline.inputs if item.is_stream]
        assert len(streamed) == 1, "validation allows one streaming input in forEachBatchMode"
        stream = streamed[0]
        for index, item in enumerate(self._pipeline.inputs):
            location = self._resolver.source(item, path=f"spec.pipeline.inputs[{index}]")
            if item.is_stream:
                raw = read_raw(self._spark, item, location)
            else:
                read_input(self._spark, item, location).view.createOrReplaceTempView(item.name)
        writer = raw.writeStream.foreachBatch(
            lambda batch, batch_id: self._write_micro_batch(stream, batch, batch_id)
        ).queryName(self._job.name)
        checkpoint = self._checkpoint(FOR_EACH_BATCH_QUERY)
        if checkpoint:
            writer = writer.option("checkpointLocation", checkpoint)
        with scheduler_pool(self._spark, FOR_EACH_BATCH_QUERY):
            return with_trigger(writer, self._pipeline.streaming).start()

    def _write_micro_batch(self, stream: Input, batch: DataFrame, batch_id: int) -> None:
        """Run the steps on one micro-batch and write it to every output."""
        batch.persist()
        try:
            spark = batch.sparkSession
            frames = (
                split_kafka_json(batch, stream)
                if stream.format is InputFormat.KAFKA_JSON
                else InputFrames(view=batch)
            )
            frames.view.createOrReplaceTempView(stream.name)
            self._define_steps(spark)
            for planned in self._outputs:
                frame = self._batch_frame(planned, stream, frames, spark)
                if self._pipeline.show_preview_lines:
                    frame.show(self._pipeline.show_preview_lines, truncate=False)
                write_batch(
                    frame,
                    planned.output,
                    planned.sink,
                    batch_id=batch_id,
                    writer_id=self._writer_id(planned),
                )
        finally:
            batch.unpersist()

    def _batch_frame(
        self, planned: PlannedOutput, stream: Input, frames: InputFrames, spark: SparkSession
    ) -> DataFrame:
        if stream.bad_records is not None and planned.output.name == stream.bad_records.output:
            assert frames.bad_records is not None
            count = frames.bad_records.count()
            self._report(BadRecordsReport(input=stream.name, count=count))
            return frames.bad_records
        return spark.table(planned.output.name)

    def _report_plan(self, key: str, frame: DataFrame) -> None:
        plan = plan_text(frame, secrets=self._resolver.secret_values)
        self._report(PlanReport(output=key, plan=plan))

    def _report(self, report: PlanReport | BadRecordsReport | WrittenReport) -> None:
        """Report ``report`` dated now, as the job's and the application's."""
        about = {
            "timestamp": self._clock.now().isoformat(),
            "name": self._job.name,
            "applicationId": self._application_id,
        }
        self._reporter.report({**report.to_wire(), **about})

    def _stop_after_current_batch(self) -> None:
        stop_after_current_batch(self._queries, clock=self._clock)
