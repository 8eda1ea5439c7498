"""Snapshots for real: a server process with its supervisor, real spark-submit drivers on local
Spark, a real Kafka broker and a Delta table, one server and broker for the module.

A watermarked count per key per 10-second window, from a Kafka topic into Delta with
EXACTLY_ONCE (``windowed_counts``), is snapshotted while it runs, stopped with an aligned
snapshot, started again from that one, suspended and resumed, and started from the older
snapshot (refused, naming the Delta version, then allowed to replay); every window of the output
holds its records once. A second job takes periodic snapshots with a retention of two, and once
its checkpoint is deleted starts again from one through ``processing.initialSnapshotName``.
"""

from __future__ import annotations

import itertools
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyspark.sql import SparkSession

from streamjobs.devtools.kafka import KafkaBroker
from tests.e2e.test_applications import Server, running_server
from tests.e2e.windowed_counts import (
    OUTPUT,
    Events,
    application,
    assert_counted_once,
    client,
    counting_job,
    delta_version,
    described,
    events,
    in_state,
    kinds,
    messages,
    of_application,
    put,
    ready,
    run,
    snapshots,
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


@dataclass(frozen=True)
class Site:
    """The module's server, where its jobs keep their data, and its broker."""

    server: Server
    data: Path
    broker: KafkaBroker

    def new_topic(self) -> str:
        topic = f"events-{uuid.uuid4().hex[:8]}"
        self.broker.create_topic(topic)
        return topic


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, kafka_broker: KafkaBroker) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("snapshots-e2e")
    with running_server(root) as server:
        with client(server) as api:
            store_kafka(api, kafka_broker)
        yield Site(server, root / "data", kafka_broker)


def test_snapshot_while_running_stop_suspend_and_start_from_each(
    site: Site, spark: SparkSession
) -> None:
    job_name = "counts"
    sent = Events(site.broker, site.new_topic())
    table = table_of(site.data, job_name)
    with client(site.server) as api:
        put(api, f"/api/v1/jobs/{job_name}", counting_job(job_name, sent.topic, site.data))
        first = run(api, job_name)
        describe = described(api, first)
        sent.send_phase()
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        # a. on demand while it runs: it goes on, and later records still arrive
        asked = api.post(f"/api/v1/jobs/{job_name}/snapshots", json={"name": "while-running"})
        assert asked.status_code == 202, asked.text
        assert asked.json()["status"] == "TAKING"
        assert asked.headers["Location"].endswith(f"/jobs/{job_name}/snapshots/while-running")
        taken = ready(api, job_name, "while-running", describe)
        assert (taken["kind"], taken["application"]) == ("manual", first)
        [at_taken] = taken["positions"]
        assert (at_taken["output"], at_taken["format"], at_taken["tracked"]) == (
            OUTPUT,
            "delta",
            True,
        )
        assert at_taken["txnVersion"] == taken["batches"][OUTPUT]
        assert at_taken["description"] == (
            f"delta version {at_taken['version']} (batch {at_taken['txnVersion']})"
        )
        assert taken["sizeBytes"] > 0
        assert any(kind == "snapshot-taken" for kind in kinds(api, first))
        assert application(api, first)["state"] == "RUNNING"
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)
        assert delta_version(table) > at_taken["version"]

        # b. a graceful stop takes an aligned snapshot with each output's position
        sent.send_phase()
        stop = ended_with_snapshot(api, job_name, first, "stop", describe)
        [at_stop] = stop["positions"]
        assert at_stop["version"] == delta_version(table)
        assert at_stop["txnVersion"] == stop["batches"][OUTPUT] > at_taken["txnVersion"]

        # c. run from the stop's snapshot: every record once, across the stop
        second = run(api, job_name, fromSnapshot=stop["name"])
        describe = described(api, first, second)
        wait_for("RUNNING", in_state(api, second, "RUNNING"), describe)
        [started] = messages(api, second, "started-from-snapshot")
        assert stop["name"] in started
        assert any(item["kind"] == "replaced" for item in snapshots(api, job_name))
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        # f. suspend: SUSPENDED with an aligned snapshot; resume goes on from there
        sent.send_phase()
        suspend = ended_with_snapshot(api, job_name, second, "suspend", describe)
        assert suspend["positions"][0]["version"] == delta_version(table)
        assert api.post(f"/api/v1/jobs/{job_name}/resume").status_code == 202
        wait_for(
            "RUNNING again",
            lambda: (
                in_state(api, second, "RUNNING")()
                and len(application(api, second)["attempts"]) == 2
            ),
            describe,
        )
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        # d. the snapshot taken while running is older than the output now: refused, naming
        # the Delta version, unless replay is allowed
        latest = ended_with_snapshot(api, job_name, second, "stop", describe)
        now = delta_version(table)
        refused = api.post(f"/api/v1/jobs/{job_name}/run", json={"fromSnapshot": "while-running"})
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert f"{OUTPUT}: the snapshot is at delta version {at_taken['version']}" in detail
        assert f"the output now at delta version {now}" in detail
        assert delta_version(table) == now, "a refused start writes nothing"

        # The windowed count keeps state, and Delta would skip the batches it holds without
        # running them: its state would miss them, so even replay is refused, and says why.
        replay = api.post(
            f"/api/v1/jobs/{job_name}/run",
            json={"fromSnapshot": "while-running", "allowReplay": True},
        )
        assert replay.status_code == 409, replay.text
        assert f"the stateful queries {OUTPUT} cannot replay" in replay.json()["detail"]
        assert delta_version(table) == now, "a refused start writes nothing"
        assert latest["positions"][0]["txnVersion"] is not None


def test_periodic_snapshots_keep_the_newest_and_a_new_checkpoint_starts_from_one(
    site: Site, spark: SparkSession
) -> None:
    job_name = "periodic"
    sent = Events(site.broker, site.new_topic())
    table = table_of(site.data, job_name)
    job = counting_job(
        job_name, sent.topic, site.data, snapshotIntervalMillis=5000, snapshotsToKeep=2
    )
    with client(site.server) as api:
        put(api, f"/api/v1/jobs/{job_name}", job)
        first = run(api, job_name)
        describe = described(api, first)
        sent.send_phase()
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)

        def periodic_taken() -> list[str]:
            """The periodic snapshots' names, in the order their events say they were taken."""
            return [
                message.split()[1]
                for kind, message in events(api, first)
                if kind == "snapshot-taken" and "(periodic)" in message
            ]

        def kept() -> list[str]:
            return [
                item["name"]
                for item in snapshots(api, job_name)
                if item["kind"] in ("periodic", "stop", "suspend") and item["status"] == "READY"
            ]

        polls = itertools.count()

        def three_taken_two_kept() -> bool:
            """Records keep coming: a periodic snapshot is only taken of batches not kept yet."""
            if next(polls) % 4 == 0:
                sent.send_phase()
            taken = periodic_taken()
            return len(taken) >= 3 and kept() == taken[:-3:-1]

        wait_for(
            "three periodic snapshots taken, the newest two kept",
            three_taken_two_kept,
            lambda: f"taken {periodic_taken()}, kept {kept()}",
        )
        assert any("retention deleted" in message for _, message in events(api, first))

        # A stop's snapshot counts against the same two.
        stop = ended_with_snapshot(api, job_name, first, "stop", describe)
        wait_for(
            "the stop's snapshot and the newest periodic one kept",
            lambda: kept() == [stop["name"], periodic_taken()[-1]],
            lambda: f"taken {periodic_taken()}, kept {kept()}",
        )

        # Without its checkpoint the job starts from initialSnapshotName, and counts nothing
        # twice.
        shutil.rmtree(site.data / job_name / "checkpoint")
        job["spec"]["processing"]["initialSnapshotName"] = stop["name"]
        put(api, f"/api/v1/jobs/{job_name}", job)
        second = run(api, job_name)
        describe = described(api, second)
        wait_for("RUNNING", in_state(api, second, "RUNNING"), describe)
        [started] = messages(api, second, "started-from-snapshot")
        assert stop["name"] in started
        sent.send_phase()
        assert_counted_once(spark, table, sent, describe)
        assert api.post(f"/api/v1/applications/{second}/abort").status_code == 202


ENDED = {"stop": "STOPPED", "suspend": "SUSPENDED"}
"""The state each ending (``stop`` or ``suspend``, also the kind of its snapshot) leaves."""


def ended_with_snapshot(
    api: httpx.Client,
    job_name: str,
    application_id: str,
    ending: str,
    describe: Callable[[], str],
) -> dict[str, Any]:
    """Ask the job to ``ending`` (stop or suspend), wait until the application is in the state
    that leaves and the snapshot it takes on the way is READY; that snapshot."""
    answer = api.post(f"/api/v1/jobs/{job_name}/{ending}")
    assert answer.status_code == 202, answer.text
    state = ENDED[ending]
    wait_for(state, in_state(api, application_id, state), describe)
    taken = wait_for(
        f"the {ending}'s snapshot",
        lambda: of_application(api, job_name, application_id, ending),
        describe,
    )
    return ready(api, job_name, taken["name"], describe)
