"""Upgrades for real: a server process with its supervisor, real spark-submit drivers on local
Spark (and the dry run's short one), a real Kafka broker and a Delta table.

One watermarked count per key per 10-second window, from a Kafka topic into Delta with
EXACTLY_ONCE (``windowed_counts``), is upgraded while records keep coming:

- last-state, with a filter added in the stateless step before the count, then snapshot mode
  with the filter changed: each checked first, each SUCCEEDED after its watch, every record
  counted once across both;
- a new aggregation key: refused by the dry run (409 naming the operator), the running
  application untouched;
- a step naming a column the input does not have, in stateless mode (which checks nothing): the
  new application fails at its start and the upgrade is rolled back, with the previous spec and
  the upgrade's snapshot; the events and the audit say why, and the output is still exactly once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyspark.sql import SparkSession

from streamjobs.devtools.kafka import KafkaBroker
from tests.e2e.test_applications import Server, running_server
from tests.e2e.windowed_counts import (
    CLEAN_SQL,
    COUNT_SQL,
    IGNORED,
    Events,
    application,
    assert_counted_once,
    client,
    counting_job,
    described,
    in_state,
    kinds,
    messages,
    put,
    ready,
    run,
    store_kafka,
    table_of,
    wait_for,
)
from tests.spark.conftest import spark

__all__ = ["spark"]
pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.snapshots,
    pytest.mark.timeout(1800),
]
JOB = "upgrading"
FILTERED = f"{CLEAN_SQL} WHERE k <> '{IGNORED}'"
FILTERED_MORE = f"{CLEAN_SQL} WHERE k NOT IN ('{IGNORED}', 'skipped')"
BY_REGION = f"{COUNT_SQL}, region"
"""The count's key gains a column: its state's key schema no longer fits the checkpoint's."""
NO_SUCH_COLUMN = f"{CLEAN_SQL} WHERE no_such_column > 0"
ENDED = {"SUCCEEDED", "ROLLED_BACK", "FAILED"}


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, kafka_broker: KafkaBroker
) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("upgrades-e2e")
    with running_server(root) as running:
        with client(running) as api:
            store_kafka(api, kafka_broker)
        yield running, root / "data"


def manifest(topic: str, data: Path, *, window: int, **sql: str) -> dict[str, Any]:
    job = counting_job(JOB, topic, data, **sql)
    job["spec"]["upgrade"] = {"rollbackWithinSeconds": window}
    return job


def upgrade(api: httpx.Client, mode: str) -> httpx.Response:
    return api.post(f"/api/v1/jobs/{JOB}/upgrade", json={"mode": mode})


def upgraded(api: httpx.Client, upgrade_id: str, describe: Callable[[], str]) -> dict[str, Any]:
    """The upgrade once it has ended."""

    def ended() -> dict[str, Any] | None:
        found: dict[str, Any] = api.get(f"/api/v1/jobs/{JOB}/upgrades/{upgrade_id}").json()
        return found if found["status"] in ENDED else None

    found: dict[str, Any] = wait_for(f"upgrade {upgrade_id} to end", ended, describe)
    return found


def test_upgrades_keep_every_record_once_refuse_what_does_not_fit_and_roll_back_a_failure(
    server: tuple[Server, Path], kafka_broker: KafkaBroker, spark: SparkSession
) -> None:
    running, data = server
    topic = f"events-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    sent = Events(kafka_broker, topic)
    table = table_of(data, JOB)
    with client(running) as api:
        put(api, f"/api/v1/jobs/{JOB}", manifest(topic, data, window=5))
        first = run(api, JOB)
        describe = described(api, first)
        sent.send_phase()
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        # last-state, a filter added before the count
        put(api, f"/api/v1/jobs/{JOB}", manifest(topic, data, window=5, clean_sql=FILTERED))
        assert api.get(f"/api/v1/jobs/{JOB}").json()["status"]["changedSinceRunning"] is True
        asked = upgrade(api, "last-state")
        assert asked.status_code == 202, asked.text
        assert asked.json()["status"] == "STOPPING"
        # while it stops and starts again: no record the filter drops, which the old spec may
        # still read and count before it stops
        sent.send_phase()
        done = upgraded(api, asked.json()["id"], describe)
        assert done["status"] == "SUCCEEDED", done
        assert done["fromApplication"] == first
        assert done["toVersion"] == done["fromVersion"] + 1
        assert FILTERED in done["diff"]
        second = done["toApplication"]
        describe = described(api, first, second)
        assert application(api, first)["state"] == "STOPPED"
        assert application(api, second)["state"] == "RUNNING"
        assert "upgrade-succeeded" in kinds(api, second)
        sent.send_phase(ignored=2)
        assert_counted_once(spark, table, sent, describe)

        # snapshot mode: the new spec on a copy of the aligned snapshot taken at the stop
        put(api, f"/api/v1/jobs/{JOB}", manifest(topic, data, window=5, clean_sql=FILTERED_MORE))
        asked = upgrade(api, "snapshot")
        assert asked.status_code == 202, asked.text
        sent.send_phase(ignored=1)
        done = upgraded(api, asked.json()["id"], describe)
        assert done["status"] == "SUCCEEDED", done
        assert done["mode"] == "snapshot"
        kept = ready(api, JOB, done["snapshot"], describe)
        assert (kept["kind"], kept["application"]) == ("upgrade", second)
        third = done["toApplication"]
        describe = described(api, second, third)
        assert "started-from-snapshot" in kinds(api, third)
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        # a new aggregation key does not fit the count's state: the dry run says which operator
        put(
            api,
            f"/api/v1/jobs/{JOB}",
            manifest(topic, data, window=5, clean_sql=FILTERED_MORE, count_sql=BY_REGION),
        )
        before = application(api, third)
        refused = upgrade(api, "last-state")
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert "operator 0 (an aggregation)" in detail, detail
        assert "region" in detail, detail
        after = application(api, third)
        assert after["state"] == "RUNNING"
        assert len(after["attempts"]) == len(before["attempts"])
        assert "upgrade-requested" not in kinds(api, third)
        live = api.get(f"/api/v1/jobs/{JOB}/applications").json()["items"]
        assert [item["id"] for item in live if item["state"] == "RUNNING"] == [third]

        # a step naming a column that does not exist, stateless (nothing is checked): it fails
        # at its start and is rolled back to the previous spec and the upgrade's snapshot
        put(api, f"/api/v1/jobs/{JOB}", manifest(topic, data, window=300, clean_sql=NO_SUCH_COLUMN))
        asked = upgrade(api, "stateless")
        assert asked.status_code == 202, asked.text
        sent.send_phase()
        done = upgraded(api, asked.json()["id"], describe)
        assert done["status"] == "ROLLED_BACK", done
        failed, back = done["toApplication"], done["rollbackApplication"]
        describe = described(api, failed, back)
        assert application(api, failed)["state"] == "FAILED"
        assert (
            f"the upgraded application {application(api, failed)['name']} failed" in done["reason"]
        )
        [rolling] = messages(api, failed, "upgrade-rolling-back")
        assert done["reason"] in rolling
        [rolled] = messages(api, back, "rolled-back")
        assert done["snapshot"] in rolled
        assert done["reason"] in rolled
        job = api.get(f"/api/v1/jobs/{JOB}").json()
        assert job["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] == FILTERED_MORE
        assert job["metadata"]["resourceVersion"] == str(done["rollbackVersion"])
        audit = api.get("/api/v1/audit", params={"action": "job.rollback"}).json()["items"]
        assert [entry["detail"]["upgrade"] for entry in audit] == [done["id"]]
        assert audit[0]["detail"]["reason"] == done["reason"]
        wait_for("the rolled back spec RUNNING", in_state(api, back, "RUNNING"), describe)
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        history = api.get(f"/api/v1/jobs/{JOB}/upgrades").json()["items"]
        assert [item["status"] for item in history] == ["ROLLED_BACK", "SUCCEEDED", "SUCCEEDED"]
        assert api.post(f"/api/v1/applications/{back}/abort").status_code == 202
