"""The ``dry-run`` tool: the new spec of a pipeline replays the last batch of a checkpoint copy
(``runner/tool_main.py dry-run --result-file F --manifest M [--connections C] --checkpoint DIR
--timeout-seconds S``).

An upgrade's compatibility check must know whether the new pipeline can continue from the
running one's checkpoint before anything is stopped. Spark answers that itself when a query
starts on a checkpoint: it compares the plan's stateful operators with the state metadata, and
each operator's state key and value schema with the stored ones. So the tool builds the pipeline
as the runner does (``runner.pipeline.PipelineRun``), with every output writing to Spark's
``noop`` sink and the copy as checkpoint, after removing each query's last commit so that Spark
plans and runs that batch again against the state before it (``Trigger.Once``: that batch
only). A query that ran no batch yet has nothing to check, and is not started.

Spark compares the operators with the state metadata only from batch 1 on; the tool also
compares them itself once the batch ran (the operators in the batch's progress with those the
copy's ``state-metadata`` source lists). The answer is a ``domain.dry_runs.DryRunResult`` as
JSON in the result file, written whole (temp name, then rename); the server explains the
failures (``domain.dry_runs.explain``). Exit codes: 0 answered, 1 the tool failed (the answer's
``error`` says how), 2 the manifest, connections or secrets are unusable.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamjobs.domain.clock import Clock, SystemClock
from streamjobs.domain.connections import Connection
from streamjobs.domain.datasets import DatasetResolver, SparkSink, secrets_from_environment
from streamjobs.domain.dry_runs import (
    OPERATORS_CHANGED,
    TIMED_OUT,
    DryRunResult,
    QueryCheck,
    StoredOperator,
    error_condition,
    error_summary,
    operators_changed_message,
)
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.manifest import Output, OutputFormat, StreamingJob, TriggerMode
from streamjobs.domain.pipeline_queries import FOR_EACH_BATCH_QUERY, output_keys
from streamjobs.domain.snapshots import last_batch
from streamjobs.domain.state_inspection import query_key
from streamjobs.runner.main import RunRequest, prepare
from streamjobs.runner.pipeline import PipelineRun
from streamjobs.runner.query_control import error_text
from streamjobs.runner.session import build_session

NOOP_FORMAT = "noop"
STATE_SCHEMA_CHECK = "spark.sql.streaming.stateStore.stateSchemaCheck"
QUERY_ENTRIES = ("offsets", "commits")
EXIT_ANSWERED, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def main(argv: Sequence[str]) -> int:
    """Run the dry run ``argv`` asks for, write the answer, return the exit code."""
    return answer(argv)


def answer(argv: Sequence[str], *, spark: SparkSession | None = None) -> int:
    """``main`` in ``spark`` (a caller's session, in-process); None: the job's own session."""
    args = _parser().parse_args(argv)
    result_file = Path(args.result_file)
    environment = dict(os.environ)
    request = RunRequest(
        manifest=args.manifest, connections=args.connections, environment=environment
    )
    try:
        prepared = prepare(request)
    except InvalidInput as error:
        write_result(result_file, DryRunResult(compatible=False, error=error.detail))
        return EXIT_INVALID
    try:
        if spark is None:
            spark = build_session(prepared.job, connections=prepared.connections.values())
        result = dry_run(
            spark,
            prepared.job,
            connections=prepared.connections,
            secrets=secrets_from_environment(environment, prepared.connections.values()),
            checkpoint=Path(args.checkpoint),
            timeout_seconds=args.timeout_seconds,
        )
    except Exception as error:
        failed = DryRunResult(compatible=False, error=error_summary(error_text(error)))
        write_result(result_file, failed)
        return EXIT_FAILED
    write_result(result_file, result)
    return EXIT_ANSWERED


def dry_run(
    spark: SparkSession,
    job: StreamingJob,
    *,
    connections: Mapping[str, Connection],
    secrets: Mapping[str, str],
    checkpoint: Path,
    timeout_seconds: float,
    clock: Clock | None = None,
) -> DryRunResult:
    """Replay the last batch of each query of the checkpoint copy at ``checkpoint`` (which this
    changes) with ``job``'s pipeline, writing nothing anywhere but there."""
    clock = clock or SystemClock()
    pipeline = job.spec.pipeline
    if pipeline is None or pipeline.batch_mode:
        return DryRunResult(compatible=True)
    by_batch = pipeline.streaming.for_each_batch_mode
    keys = [FOR_EACH_BATCH_QUERY] if by_batch else output_keys(pipeline)
    kept = [key for key in keys if _is_query(checkpoint / key)]
    if not kept:
        return DryRunResult(compatible=True)
    held = {key: stored_operators(spark, checkpoint / key) for key in kept}
    replayed = {key: rewind(checkpoint / key) for key in kept}
    spark.conf.set(STATE_SCHEMA_CHECK, "true")
    trial = PipelineRun(
        spark,
        trial_job(job, checkpoint=checkpoint.as_uri(), keys=kept),
        resolver=NoopSinks(connections=connections, secrets=secrets),
        reporter=_Discarded(),
        clock=clock,
    )
    try:
        trial.start()
    except Exception as error:
        _stop(trial.queries)
        started = {query_key(job.name, query.name) for query in trial.queries}
        failing = next((key for key in kept if key not in started), kept[0])
        message = error_summary(error_text(error))
        check = QueryCheck(
            query=failing,
            batch=replayed[failing],
            error=message,
            error_class=error_condition(message),
        )
        return DryRunResult(compatible=False, queries=(check,))
    deadline = clock.now() + timedelta(seconds=timeout_seconds)
    checks = []
    for query in trial.queries:
        key = query_key(job.name, query.name) or str(query.name)
        left = max((deadline - clock.now()).total_seconds(), 0.0)
        checks.append(_outcome(query, key, replayed.get(key), held.get(key), left))
    _stop(trial.queries)
    return DryRunResult(
        compatible=all(check.error is None for check in checks), queries=tuple(checks)
    )


def rewind(query: Path) -> int | None:
    """Make Spark replay the query's last planned batch: its commit is removed when it has one.
    The batch replayed; None for a query that planned none."""
    planned = last_batch(os.listdir(query / "offsets"))
    if planned is None:
        return None
    commits = query / "commits"
    if last_batch(os.listdir(commits)) == planned:
        (commits / str(planned)).unlink()
        (commits / f".{planned}.crc").unlink(missing_ok=True)
    return planned


def stored_operators(spark: SparkSession, query: Path) -> tuple[StoredOperator, ...] | None:
    """The stateful operators the query's checkpoint holds state for, with their schemas (from
    Spark's ``state-metadata`` and ``statestore`` sources); None when they cannot be read."""
    if not (query / "state").is_dir():
        return ()
    try:
        rows = spark.read.format("state-metadata").load(str(query)).collect()
    except Exception:
        return None
    names: dict[int, str] = {}
    for row in rows:
        names.setdefault(int(row["operatorId"]), str(row["operatorName"]))
    operators = []
    for operator_id, name in sorted(names.items()):
        key_schema, value_schema = _schemas(spark, query, operator_id)
        operators.append(
            StoredOperator(
                operator_id=operator_id,
                operator_name=name,
                key_schema=key_schema,
                value_schema=value_schema,
            )
        )
    return tuple(operators)


def trial_job(job: StreamingJob, *, checkpoint: str, keys: Sequence[str]) -> StreamingJob:
    """``job`` for the dry run: triggered once, checkpointing at ``checkpoint``, showing and
    explaining nothing, with only the outputs whose queries have a checkpoint (``keys``; all
    outputs when leaving some out would rename the others' queries, or in forEachBatchMode)."""
    pipeline = job.spec.pipeline
    assert pipeline is not None
    outputs = [_noop(output) for output in pipeline.outputs]
    if not pipeline.streaming.for_each_batch_mode:
        pairs = zip(output_keys(pipeline), outputs, strict=True)
        kept = [output for key, output in pairs if key in keys]
        renamed = output_keys(pipeline.model_copy(update={"outputs": kept})) != [
            key for key in output_keys(pipeline) if key in keys
        ]
        outputs = outputs if renamed else kept
    streaming = pipeline.streaming.model_copy(
        update={
            "trigger_mode": TriggerMode.ONCE,
            "trigger_duration": None,
            "checkpoint_location": checkpoint,
        }
    )
    changed = pipeline.model_copy(
        update={
            "streaming": streaming,
            "outputs": outputs,
            "explain": False,
            "show_preview_lines": 0,
        }
    )
    return job.model_copy(update={"spec": job.spec.model_copy(update={"pipeline": changed})})


class NoopSinks(DatasetResolver):
    """Resolves inputs as the job's resolver does, and every output to Spark's noop sink."""

    def sink(self, item: Output, *, path: str) -> SparkSink:
        return SparkSink(format=NOOP_FORMAT)


def write_result(path: Path, result: DryRunResult) -> None:
    """Write the answer whole: a reader sees no file or all of it."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(result.to_wire()), encoding="utf-8")
    os.replace(temporary, path)


def _noop(output: Output) -> Output:
    """An output the runner writes through its sink's format alone: a file format with no
    place has no writer of its own, in a query or in a micro-batch."""
    return output.model_copy(
        update={"format": OutputFormat.PARQUET, "dataset": None, "path": None, "options": {}}
    )


def _outcome(
    query: StreamingQuery,
    key: str,
    batch: int | None,
    held: tuple[StoredOperator, ...] | None,
    timeout: float,
) -> QueryCheck:
    try:
        ended = query.awaitTermination(timeout)  # type: ignore[arg-type]
    except StreamingQueryException:
        ended = True
    if not ended:
        query.stop()
        message = f"the replay of batch {batch} did not end within {timeout:.0f} seconds"
        return QueryCheck(query=key, batch=batch, error=message, error_class=TIMED_OUT)
    failure = query.exception()
    if failure is not None:
        message = error_summary(str(failure))
        condition = error_condition(message)
        return QueryCheck(
            query=key, batch=batch, error=message, error_class=condition, operators=held or ()
        )
    now = _operators_run(query)
    if held is not None and now is not None and _differ(held, now):
        pairs = [(operator.operator_id, operator.operator_name) for operator in held]
        message = operators_changed_message(pairs, now)
        return QueryCheck(
            query=key, batch=batch, error=message, error_class=OPERATORS_CHANGED, operators=held
        )
    return QueryCheck(query=key, batch=batch, operators=held or ())


def _operators_run(query: StreamingQuery) -> list[str] | None:
    """The names of the stateful operators the query's last batch ran, in plan order."""
    progress: dict[str, Any] | None = query.lastProgress
    if not progress:
        return None
    return [str(operator.get("operatorName")) for operator in progress.get("stateOperators", [])]


def _differ(held: Sequence[StoredOperator], now: Sequence[str]) -> bool:
    return sorted(operator.operator_name for operator in held) != sorted(now)


def _schemas(spark: SparkSession, query: Path, operator_id: int) -> tuple[str | None, str | None]:
    """The operator's stored key and value schema as Spark prints them (its messages do too)."""
    try:
        reader = spark.read.format("statestore").option("operatorId", operator_id)
        schema = reader.load(str(query))._jdf.schema()
        return str(schema.apply("key").dataType().toString()), str(
            schema.apply("value").dataType().toString()
        )
    except Exception:
        return None, None


def _is_query(directory: Path) -> bool:
    return all((directory / entry).is_dir() for entry in QUERY_ENTRIES)


def _stop(queries: Sequence[StreamingQuery]) -> None:
    for query in queries:
        if query.isActive:
            query.stop()


class _Discarded:
    """The dry run reports nothing: nobody listens."""

    def report(self, event: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool_main.py dry-run", description=__doc__)
    parser.add_argument("--result-file", required=True, help="where the JSON answer goes")
    parser.add_argument("--manifest", required=True, help="the new spec (YAML or JSON)")
    parser.add_argument("--connections", help="Connection manifests its datasets refer to")
    parser.add_argument("--checkpoint", required=True, help="a copy of the job's checkpoint")
    parser.add_argument(
        "--timeout-seconds", type=float, default=120.0, help="how long the replays may take"
    )
    return parser
