"""EXACTLY_ONCE for real: a Kafka pipeline killed with SIGKILL mid-stream, twice, and restarted
from its checkpoint, writes each of 200,000 records once to Parquet, Delta and PostgreSQL.

The runner runs as ``python -m streamjobs.runner`` leading its own process group (the Python
driver and Spark's JVM), so a kill crashes the whole application wherever its three queries are:
between micro-batches, writing one, between a batch's write and its commit. Each output has its
own query and checkpoint, so the kills land at different points of each.
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
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from streamjobs.domain.spark_conf import DELTA_SNAPSHOT_PARTITIONS
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
OUTPUTS = 3
JOB = "exactly-once"
PASSWORD_SECRET = "pg-password"
RUN_TIMEOUT = 420.0
"""Seconds one run may take to reach its kill point, or to finish."""

Progress = dict[str, Any]


def consumed(progress: Progress) -> int:
    """How many of the topic's records the query has read once this micro-batch is committed."""
    end = progress["sources"][0]["endOffset"]
    offsets = json.loads(end) if isinstance(end, str) else end
    return sum(int(offset) for partitions in offsets.values() for offset in partitions.values())


@dataclass
class RunLog:
    """What one run of the runner reported: each query's progress events, in order."""

    number: int
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0
    progress: dict[str, list[Progress]] = field(default_factory=dict)
    killed_after: Progress | None = None
    """The progress event the run was killed on, if it was."""

    def add(self, progress: Progress) -> None:
        self.progress.setdefault(progress["name"], []).append(progress)

    @property
    def rows(self) -> int:
        return sum(p["numInputRows"] for batches in self.progress.values() for p in batches)

    def batches_with_rows(self) -> int:
        return sum(1 for batches in self.progress.values() for p in batches if p["numInputRows"])

    def queries_with_rows(self) -> int:
        return sum(
            1 for batches in self.progress.values() if any(p["numInputRows"] for p in batches)
        )

    def all_read(self) -> bool:
        """Every query has read every record: nothing is left to kill in the middle of."""
        latest = [batches[-1] for batches in self.progress.values()]
        return len(latest) == OUTPUTS and all(consumed(p) == RECORDS for p in latest)

    def summary(self) -> str:
        queries = "; ".join(
            f"{name.rsplit('/', 1)[-1]} batches "
            f"{[p['batchId'] for p in batches if p['numInputRows']]}"
            for name, batches in sorted(self.progress.items())
        )
        end = "killed" if self.killed_after else "ended"
        return f"run {self.number}: {end} after {self.seconds:.0f} s, {self.rows} rows; {queries}"


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

    def events(self, timeout: float) -> Iterator[dict[str, Any]]:
        """The run's events until its stdout closes; TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"the runner was still going after {timeout:.0f} s") from None
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
        while time.monotonic() < deadline:  # Spark's JVM, orphaned now, waits for init to reap it
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


class Runs:
    """Starts the runner on one job and one checkpoint root, again and again."""

    def __init__(self, directory: Path, *, job: dict[str, Any], connections: list[Any]) -> None:
        self.directory = directory
        manifest = directory / "job.yaml"
        manifest.write_text(yaml.safe_dump(job))
        connections_file = directory / "connections.yaml"
        connections_file.write_text(yaml.safe_dump_all(connections))
        self.arguments = [
            *("--manifest", str(manifest), "--connections", str(connections_file)),
            *("--master", "local[2]", "--checkpoint-root", (directory / "checkpoints").as_uri()),
        ]
        # Trust authentication ignores the password, but the connection names a secret.
        self.env = {**os.environ, secret_env_var(PASSWORD_SECRET): "ignored-by-trust-auth"}
        self.stderr = (directory / "runner.stderr").open("ab")
        self.stdout = (directory / "runner.stdout").open("a")
        self.logs: list[RunLog] = []
        self.current: RunnerProcess | None = None

    def kill_when(self, condition: Callable[[RunLog, Progress], bool]) -> RunLog:
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
            if log.all_read():
                pytest.fail(f"every record was read before the kill point of run {log.number}")
        pytest.fail(f"run {log.number} ended before its kill point\n{self.stderr_tail()}")

    def until_idle(self) -> tuple[RunLog, int]:
        """Run with ``--until-idle`` to the end: the log and the exit code."""
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

    def stderr_tail(self) -> str:
        self.stderr.flush()
        lines = (self.directory / "runner.stderr").read_text(errors="replace").splitlines()
        return "\n".join(["last lines of the runner's stderr:", *lines[-40:]])

    def close(self) -> None:
        if self.current is not None:
            self.current.kill()
        self.stderr.close()
        self.stdout.close()


def jdbc_connection(postgres_url: str) -> dict[str, Any]:
    """A jdbc connection to the test database: superuser ``postgres``, trust authentication."""
    address = urlsplit(postgres_url)
    return connection(
        "pg",
        type="jdbc",
        url=f"jdbc:postgresql://{address.hostname}:{address.port}{address.path}",
        user=address.username,
        secretOptions={"password": PASSWORD_SECRET},
    )


def exactly_once_job(topic: str, parquet: Path) -> dict[str, Any]:
    """Kafka JSON -> one view -> Parquet, Delta and a PostgreSQL upsert, micro-batches back to
    back, at most PER_TRIGGER records each."""
    job = pipeline_job(
        JOB,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "0 seconds"},
        guarantee="EXACTLY_ONCE",
        inputs=[
            {
                "name": "orders",
                "format": "kafkajson",
                "dataset": f"kafka:{topic}",
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
            "spark.sql.shuffle.partitions": "2",
            # A query with nothing left after the restart says so within a second, not ten, so
            # --until-idle sees every query idle sooner.
            "spark.sql.streaming.noDataProgressEventInterval": "1000",
        }
    }
    return job


@contextmanager
def session_setting(spark: SparkSession, key: str, value: str) -> Iterator[None]:
    """``key`` set to ``value`` in the shared session for a while, then as it was."""
    previous = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)


def assert_every_record_once(frame: DataFrame, sink: str) -> None:
    found = frame.agg(
        F.count("*").alias("rows"),
        F.countDistinct("id").alias("ids"),
        F.min("id").alias("low"),
        F.max("id").alias("high"),
        F.count(F.when(F.col("key") != F.col("id").cast("string"), 1)).alias("bad_keys"),
    ).first()
    assert found is not None
    # RECORDS distinct whole numbers from 0 to RECORDS - 1 are exactly range(RECORDS).
    assert tuple(found) == (RECORDS, RECORDS, 0, RECORDS - 1, 0), sink


def test_killed_twice_mid_stream_each_record_lands_once_in_every_sink(
    spark: SparkSession, kafka_broker: KafkaBroker, postgres_url: str, tmp_path: Path
) -> None:
    topic = f"exactly-once-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    produce_records(kafka_broker.bootstrap_servers, topic, RECORDS)
    assert records_in(kafka_broker.bootstrap_servers, topic, PARTITIONS) == RECORDS
    parquet, delta = tmp_path / "parquet", tmp_path / "lake" / "paid"
    runs = Runs(
        tmp_path,
        job=exactly_once_job(topic, parquet),
        connections=[
            connection("kafka", type="kafka", bootstrapServers=kafka_broker.bootstrap_servers),
            connection("lake", type="lakehouse", warehouse=delta.parent.as_uri()),
            jdbc_connection(postgres_url),
        ],
    )
    try:
        # Early: once two micro-batches are committed, whichever outputs they were for.
        first = runs.kill_when(lambda log, _: log.batches_with_rows() >= 2)
        # Later: once every output has committed rows in this run, on a batch of a query that
        # has records left to read.
        second = runs.kill_when(
            lambda log, progress: (
                log.queries_with_rows() == OUTPUTS and consumed(progress) < RECORDS
            )
        )
        final, exit_code = runs.until_idle()
    finally:
        runs.close()
    assert exit_code == 0, runs.stderr_tail()
    assert first.rows > 0
    assert second.rows > 0
    assert final.rows > 0

    assert_every_record_once(spark.read.parquet(str(parquet)), "parquet")
    with session_setting(spark, DELTA_SNAPSHOT_PARTITIONS, "2"):
        assert_every_record_once(spark.read.format("delta").load(str(delta)), "delta")
    with psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://")) as pg:
        found = pg.execute(
            "SELECT count(*), count(DISTINCT id), min(id), max(id), "
            "count(*) FILTER (WHERE key <> id::text) FROM paid"
        ).fetchone()
    assert found == (RECORDS, RECORDS, 0, RECORDS - 1, 0), "postgresql"
