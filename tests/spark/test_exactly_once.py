"""EXACTLY_ONCE for real: a Kafka pipeline killed with SIGKILL mid-stream, twice, and restarted
from its checkpoint, writes each of 200,000 records once to Parquet, Delta and PostgreSQL.

The runner runs as ``python -m streamjobs.runner`` in its own process group (driver and Spark's
JVM), so a kill is a crash of the whole application at whatever point its three queries are:
between micro-batches, in the middle of writing one, between a batch's write and its commit.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import psycopg
import pytest
import yaml
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.domain.datasets import secret_env_var
from tests.spark.kafka_data import RECORD_SCHEMA, produce_records, records_in
from tests.spark.pipelines import connection, pipeline_job

pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.postgres,
    pytest.mark.timeout(900),
]

RECORDS = 200_000
PARTITIONS = 2
PER_TRIGGER = 15_000
JOB = "exactly-once"
PASSWORD_SECRET = "pg-password"
RUN_TIMEOUT = 420.0
"""Seconds one run may take to reach its kill point, or to finish."""


@dataclass
class RunLog:
    """What one run of the runner reported: its progress events, by query."""

    number: int
    started: float = field(default_factory=time.monotonic)
    progress: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seconds: float = 0.0
    killed_after: dict[str, Any] | None = None
    """The progress event the run was killed on."""

    def add(self, progress: dict[str, Any]) -> None:
        self.progress.setdefault(progress["name"], []).append(progress)

    @property
    def rows(self) -> int:
        return sum(p["numInputRows"] for batches in self.progress.values() for p in batches)

    def batches_with_rows(self) -> int:
        return sum(
            1 for batches in self.progress.values() for p in batches if p["numInputRows"] > 0
        )

    def summary(self) -> str:
        per_query = ", ".join(
            f"{name.rsplit('/', 1)[-1]}: batches "
            f"{[p['batchId'] for p in batches if p['numInputRows'] > 0]}"
            for name, batches in sorted(self.progress.items())
        )
        return f"run {self.number}: {self.seconds:.1f} s, {self.rows} rows in; {per_query}"


def consumed(progress: dict[str, Any]) -> int:
    """How many records of the topic the query has read once this batch is committed."""
    end = progress["sources"][0]["endOffset"]
    offsets = json.loads(end) if isinstance(end, str) else end
    return sum(int(offset) for partitions in offsets.values() for offset in partitions.values())


class RunnerProcess:
    """``python -m streamjobs.runner`` leading its own process group; its stdout as events."""

    def __init__(
        self, arguments: list[str], *, env: dict[str, str], stderr: IO[bytes], stdout_copy: IO[str]
    ) -> None:
        self._stdout_copy = stdout_copy
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamjobs.runner", *arguments],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            text=True,
            start_new_session=True,
        )
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # one JSON event per line; anything else is skipped
            self._stdout_copy.write(line)
            self._stdout_copy.flush()
            if line.startswith("{"):
                try:
                    self._events.put(json.loads(line))
                except ValueError:
                    continue
        self._events.put(None)

    def events(self, timeout: float) -> Any:
        """The run's events until its stdout closes; TimeoutError past ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no event from the runner for {timeout:.0f} s") from None
            if event is None:
                return
            yield event

    def kill(self) -> None:
        """SIGKILL the whole process group and wait until none of it is left."""
        group = self.process.pid
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        self.process.wait()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # Spark's JVM, orphaned, waits for init to reap it
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


class ExactlyOnceRuns:
    """Starts the runner on one job and checkpoint, again and again, and kills it."""

    def __init__(self, directory: Path, *, job: dict[str, Any], connections: list[Any]) -> None:
        self.directory = directory
        manifest = directory / "job.yaml"
        manifest.write_text(yaml.safe_dump(job))
        connections_file = directory / "connections.yaml"
        connections_file.write_text(yaml.safe_dump_all(connections))
        self.arguments = [
            "--manifest",
            str(manifest),
            "--connections",
            str(connections_file),
            "--master",
            "local[2]",
            "--checkpoint-root",
            (directory / "checkpoints").as_uri(),
        ]
        # Trust authentication ignores the password; the runner needs the secret all the same.
        self.env = {**os.environ, secret_env_var(PASSWORD_SECRET): "unused-by-trust-auth"}
        self.stderr = (directory / "runner.stderr").open("ab")
        self.stdout = (directory / "runner.stdout").open("a")
        self.logs: list[RunLog] = []
        self.current: RunnerProcess | None = None

    def kill_when(self, condition: Callable[[RunLog, dict[str, Any]], bool]) -> RunLog:
        """Run until ``condition(log, progress)`` holds for a progress event, then SIGKILL."""
        log, process = self._start()
        for event in process.events(RUN_TIMEOUT):
            if event["type"] != "progress":
                continue
            log.add(event["progress"])
            if condition(log, event["progress"]):
                process.kill()
                log.killed_after = event["progress"]
                log.seconds = time.monotonic() - log.started
                print(log.summary(), flush=True)
                return log
        pytest.fail(f"run {log.number} ended before its kill point: {self.failure_detail()}")

    def until_idle(self) -> tuple[RunLog, int]:
        """Run with ``--until-idle`` to the end; the log and the exit code."""
        log, process = self._start("--until-idle")
        for event in process.events(RUN_TIMEOUT):
            if event["type"] == "progress":
                log.add(event["progress"])
        exit_code = process.process.wait(timeout=60)
        log.seconds = time.monotonic() - log.started
        print(log.summary(), flush=True)
        return log, exit_code

    def _start(self, *extra: str) -> tuple[RunLog, RunnerProcess]:
        log = RunLog(number=len(self.logs) + 1)
        self.logs.append(log)
        self.stderr.write(f"\n===== run {log.number} =====\n".encode())
        self.stderr.flush()
        self.current = RunnerProcess(
            [*self.arguments, *extra], env=self.env, stderr=self.stderr, stdout_copy=self.stdout
        )
        return log, self.current

    def failure_detail(self) -> str:
        self.stderr.flush()
        lines = (self.directory / "runner.stderr").read_text(errors="replace").splitlines()
        return "\n".join(["last lines of the runner's stderr:", *lines[-40:]])

    def close(self) -> None:
        if self.current is not None:
            self.current.kill()
        self.stderr.close()
        self.stdout.close()


def jdbc_connection(postgres_url: str) -> dict[str, Any]:
    """A jdbc connection to the test database (superuser ``postgres``, trust authentication)."""
    address = urlsplit(postgres_url)
    return connection(
        "pg",
        type="jdbc",
        url=f"jdbc:postgresql://{address.hostname}:{address.port}{address.path}",
        user=address.username,
        secretOptions={"password": PASSWORD_SECRET},
    )


def exactly_once_job(kafka_topic: str, parquet: Path) -> dict[str, Any]:
    job = pipeline_job(
        JOB,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "0 seconds"},
        guarantee="EXACTLY_ONCE",
        inputs=[
            {
                "name": "orders",
                "format": "kafkajson",
                "dataset": f"kafka:{kafka_topic}",
                "schema": RECORD_SCHEMA,
                "options": {"startingOffsets": "earliest", "maxOffsetsPerTrigger": PER_TRIGGER},
            }
        ],
        steps=[[("paid", "SELECT id, amount, ts, key FROM orders")]],
        outputs=[
            {"name": "paid", "format": "parquet", "path": str(parquet)},
            {"name": "paid", "format": "delta", "dataset": "lake:paid"},
            {
                "name": "paid",
                "format": "jdbc",
                "dataset": "pg:paid",
                "options": {"keyColumns": ["id"]},
            },
        ],
    )
    job["spec"]["configuration"] = {
        "sparkConf": {
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            # Delta's sink looks up its last batch id in the table's state before each batch;
            # rebuilt with the default 50 partitions, that costs seconds per batch on 2 cores.
            "spark.databricks.delta.snapshotPartitions": "2",
            # A query that has nothing left after a restart reports so within a second, so
            # --until-idle sees every query idle sooner.
            "spark.sql.streaming.noDataProgressEventInterval": "1000",
        }
    }
    return job


def assert_every_record_once(frame: DataFrame, where: str) -> None:
    row = frame.agg(
        F.count("*").alias("rows"),
        F.countDistinct("id").alias("ids"),
        F.min("id").alias("low"),
        F.max("id").alias("high"),
        F.sum(F.when(F.col("key") != F.col("id").cast("string"), 1).otherwise(0)).alias("bad"),
    ).first()
    assert row is not None
    # RECORDS distinct integers between 0 and RECORDS - 1 are exactly range(RECORDS).
    assert (row.rows, row.ids, row.low, row.high, row.bad) == (
        RECORDS,
        RECORDS,
        0,
        RECORDS - 1,
        0,
    ), where


def test_killed_twice_mid_stream_every_record_lands_once_in_every_sink(
    spark: SparkSession, kafka_broker: KafkaBroker, postgres_url: str, tmp_path: Path
) -> None:
    topic = f"exactly-once-{tmp_path.name[-12:].strip('_')}"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    produce_records(kafka_broker.bootstrap_servers, topic, RECORDS)
    assert records_in(kafka_broker.bootstrap_servers, topic, PARTITIONS) == RECORDS
    parquet = tmp_path / "parquet"
    runs = ExactlyOnceRuns(
        tmp_path,
        job=exactly_once_job(topic, parquet),
        connections=[
            connection("kafka", type="kafka", bootstrapServers=kafka_broker.bootstrap_servers),
            connection("lake", type="lakehouse", warehouse=(tmp_path / "lake").as_uri()),
            jdbc_connection(postgres_url),
        ],
    )
    try:
        # Kill 1: right after the second committed micro-batch of the first run.
        first = runs.kill_when(lambda log, _: log.batches_with_rows() >= 2)
        # Kill 2: a few batches into the second run, while its query has records left to read.
        second = runs.kill_when(lambda log, _: log.batches_with_rows() >= 4)
        final, exit_code = runs.until_idle()
    finally:
        runs.close()
    summary = "\n".join(log.summary() for log in runs.logs)
    assert exit_code == 0, f"{summary}\n{runs.failure_detail()}"
    assert first.rows > 0
    assert second.rows > 0
    assert second.killed_after is not None
    assert consumed(second.killed_after) < RECORDS, "the second kill came after all was read"
    assert final.rows > 0, "the kills came after every record was read"

    assert_every_record_once(spark.read.parquet(str(parquet)), "parquet")
    assert_every_record_once(
        spark.read.format("delta").load(str(tmp_path / "lake" / "paid")), "delta"
    )
    with psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://")) as pg:
        row = pg.execute(
            "SELECT count(*), count(DISTINCT id), min(id), max(id), "
            "count(*) FILTER (WHERE key <> id::text) FROM paid"
        ).fetchone()
    assert row == (RECORDS, RECORDS, 0, RECORDS - 1, 0), "postgresql"
