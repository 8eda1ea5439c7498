"""Health rules for real: a server process with its supervisor and delivery worker, real
spark-submit drivers on local Spark, a real Kafka broker, a real PostgreSQL and a real HTTP
receiver of the notifications.

- A producer outpaces a throttled Kafka -> parquet pipeline (``maxOffsetsPerTrigger``): its
  recordsBehind rule fires, and recovers once the producer stops and the job catches up, with
  the events and the notices the webhook receives. The driver's Spark REST API, read as it is
  for python and jvm programs, shows its micro-batches completing.
- A Kafka -> JDBC pipeline whose table another session holds an ACCESS EXCLUSIVE lock on stops
  committing: its stalledSeconds rule fires and its restart action starts a second attempt.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.streaming_progress import read_streaming_progress
from tests.e2e.test_applications import Server, server, wait_for
from tests.e2e.test_resolved_connectors import application, events
from tests.notify_receivers import HttpReceiver, http_receiver, webhook_destination
from tests.services import SUPERUSER, PostgresServer
from tests.spark.kafka_topics import produce
from tests.spark.pipelines import connection, pipeline_job

__all__ = ["server"]
pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.timeout(600)]


def kinds(api: httpx.Client, application_id: str) -> list[str]:
    return [kind for kind, _ in events(api, application_id)]


def attempts(api: httpx.Client, application_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = application(api, application_id)["attempts"]
    return found


def kafka_job(
    name: str, topic: str, output: dict[str, Any], tmp: Path, **spec: Any
) -> dict[str, Any]:
    """A throttled Kafka -> ``output`` pipeline (20 records a batch, a batch a second)."""
    job = pipeline_job(
        name,
        inputs=[
            {
                "name": "orders",
                "dataset": f"kafka-main:{topic}",
                "format": "kafka",
                "options": {"startingOffsets": "earliest", "maxOffsetsPerTrigger": 20},
            }
        ],
        steps=[[("values", "SELECT CAST(value AS STRING) AS value FROM orders")]],
        outputs=[output],
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        checkpointLocation=(tmp / "data" / name / "checkpoint").as_uri(),
    )
    job["spec"]["pipeline"]["logLevel"] = "WARN"
    job["spec"].update(configuration={"sparkConf": {"spark.sql.shuffle.partitions": "1"}}, **spec)
    return job


def put(api: httpx.Client, path: str, document: dict[str, Any]) -> None:
    answer = api.put(path, json=document)
    assert answer.is_success, answer.text


def run_notifying(
    api: httpx.Client, job: dict[str, Any], broker: KafkaBroker, receiver: HttpReceiver
) -> str:
    """Store the connection to ``broker``, the destination "ops" (``receiver``) and ``job``, and
    run it: the application's id."""
    kafka = connection("kafka-main", type="kafka", bootstrapServers=broker.bootstrap_servers)
    put(api, "/api/v1/connections/kafka-main", kafka)
    destination = webhook_destination("ops", receiver.url)
    answer = api.post("/api/v1/notification-destinations", json=destination)
    assert answer.status_code == 201, answer.text
    name = job["metadata"]["name"]
    put(api, f"/api/v1/jobs/{name}", job)
    started = api.post(f"/api/v1/jobs/{name}/run")
    assert started.status_code == 201, started.text
    app_id: str = started.json()["id"]
    return app_id


def described(api: httpx.Client, application_id: str) -> Callable[[], str]:
    """What a failed wait shows: the application's events and its latest figures."""
    return lambda: (
        f"{events(api, application_id)}\n{application(api, application_id).get('latest')}"
    )


def notified(receiver: HttpReceiver) -> list[tuple[Any, Any]]:
    return [(body.get("event"), body.get("rule")) for body in receiver.distinct()]


def test_a_backlog_rule_fires_while_a_producer_outpaces_the_job_and_recovers_after(
    server: Server, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    output = {
        "name": "values",
        "format": "parquet",
        "path": (tmp_path / "data" / "backlog" / "out").as_uri(),
    }
    backlog = {
        "name": "backlog",
        "metric": "recordsBehind",
        "threshold": 60,
        "durationSeconds": 2,
        "actions": ["notify"],
    }
    subscription = {"destination": "ops", "events": ["health-firing", "health-recovered"]}
    job = kafka_job(
        "backlog",
        topic,
        output,
        tmp_path,
        health={"rules": [backlog]},
        notifications=[subscription],
    )

    def producer() -> None:  # 400 records in about a second; the job reads 20 a batch
        for burst in range(8):
            produce(kafka_broker, topic, ((None, f"order-{burst}-{i}") for i in range(50)))
            time.sleep(0.1)

    with http_receiver() as receiver, server.client() as api:
        app_id = run_notifying(api, job, kafka_broker, receiver)
        describe = described(api, app_id)

        produce(kafka_broker, topic, ((None, f"first-{i}") for i in range(5)))
        wait_for(
            "a committed batch", lambda: "first-batch-committed" in kinds(api, app_id), describe
        )
        thread = threading.Thread(target=producer, daemon=True)
        thread.start()
        wait_for(
            "the backlog rule to fire", lambda: "health-firing" in kinds(api, app_id), describe
        )
        thread.join(timeout=30)
        wait_for(
            "the job to catch up and the rule to recover",
            lambda: "health-recovered" in kinds(api, app_id),
            describe,
        )
        health = [(k, m) for k, m in events(api, app_id) if k.startswith("health-")]
        assert [kind for kind, _ in health] == ["health-firing", "health-recovered"]
        assert "recordsBehind > 60" in health[0][1]
        wait_for(
            "both notices at the webhook",
            lambda: len(notified(receiver)) == 2,
            lambda: str(receiver.bodies()),
        )
        assert notified(receiver) == [("health-firing", "backlog"), ("health-recovered", "backlog")]
        firing = receiver.distinct()[0]
        assert firing["job"] == "backlog"
        assert firing["figures"]["recordsBehind"] > 60

        # what a python or jvm program's stall is judged on, read from this real driver
        [attempt] = attempts(api, app_id)
        handle = DriverHandle(
            pid=attempt["pid"],
            started_at=0.0,
            directory="",
            ui_port=attempt["uiPort"],
            master=attempt["master"] or "",
        )
        progress = read_streaming_progress(handle)
        assert progress is not None
        assert progress.last_batch_at is not None
        assert api.post(f"/api/v1/applications/{app_id}/abort").is_success


@pytest.mark.postgres
def test_a_sink_that_blocks_fires_the_stall_rule_which_restarts_the_job(
    server: Server,
    kafka_broker: KafkaBroker,
    postgres_server: PostgresServer,
    tmp_path: Path,
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    produce(kafka_broker, topic, ((None, f"order-{number}") for number in range(2000)))
    database = postgres_server.create_database()
    dsn = f"host=127.0.0.1 port={postgres_server.port} user={SUPERUSER} dbname={database}"
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute("CREATE TABLE sink (value text)")
    output = {"name": "values", "format": "jdbc", "dataset": "sink-db:public.sink"}
    stall = {
        "name": "stall",
        "metric": "stalledSeconds",
        "threshold": 8,
        "actions": ["notify", "restart"],
    }
    subscription = {"destination": "ops", "events": ["health-firing", "restarting"]}
    job = kafka_job(
        "stalling",
        topic,
        output,
        tmp_path,
        health={"rules": [stall]},
        notifications=[subscription],
    )
    job["spec"]["restartPolicy"] = {"type": "Never"}

    with http_receiver() as receiver, server.client() as api, psycopg.connect(dsn) as holder:
        jdbc_url = f"jdbc:postgresql://127.0.0.1:{postgres_server.port}/{database}"
        sink = connection("sink-db", type="jdbc", url=jdbc_url, user=SUPERUSER)
        put(api, "/api/v1/connections/sink-db", sink)
        app_id = run_notifying(api, job, kafka_broker, receiver)
        describe = described(api, app_id)
        wait_for(
            "a committed batch", lambda: "first-batch-committed" in kinds(api, app_id), describe
        )

        holder.execute("LOCK TABLE sink IN ACCESS EXCLUSIVE MODE")  # held until rollback
        wait_for("the stall rule to fire", lambda: "health-firing" in kinds(api, app_id), describe)
        wait_for("a second attempt", lambda: len(attempts(api, app_id)) >= 2, describe)
        holder.rollback()

        wait_for(
            "the second attempt running",
            lambda: (
                application(api, app_id)["state"] == "RUNNING"
                and kinds(api, app_id).count("driver-running") == 2
            ),
            describe,
        )
        found = kinds(api, app_id)
        after = found[found.index("health-firing") :]
        assert after[: after.index("submitted") + 1] == [
            "health-firing",
            "driver-exited",
            "restarting",
            "submitted",
        ]
        firing = dict(events(api, app_id))["health-firing"]
        assert "restarting the application" in firing
        restarted = application(api, app_id)
        assert restarted["restarts"] == 1
        assert attempts(api, app_id)[0]["outcome"] == "restarted"
        wait_for(
            "the notices at the webhook",
            lambda: len(notified(receiver)) >= 2,
            lambda: str(receiver.bodies()),
        )
        assert notified(receiver)[:2] == [("health-firing", "stall"), ("restarting", None)]
        assert api.post(f"/api/v1/applications/{app_id}/abort").is_success
