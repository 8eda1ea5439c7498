"""A cluster-mode driver's host lost mid-stream, for real: a Kafka -> Parquet pipeline,
EXACTLY_ONCE, its driver on one worker of the namespace cluster; that worker's host is torn
down (its driver and executors die with it) while records are being read. The master reports
the driver ended once it gives the worker up; the job's restart policy starts a new attempt,
whose driver the master can only place on the other worker; it resumes from the checkpoint, and
the output holds every record sent, before, during and after the loss, exactly once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from pyspark.sql import SparkSession

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.launch.master_applications import end_application
from tests.e2e.windowed_counts import application, described, put, run, store_kafka
from tests.multihost.cluster import NetnsCluster
from tests.multihost.cluster_jobs import (
    active_application_ids,
    active_driver_ids,
    add_tiny_node_type,
    committed_files,
    driver_worker_host,
    kafka_job,
    other_worker,
    output_of,
    running_attempt,
    wait_until,
)
from tests.multihost.servers import ServerStarter
from tests.spark.conftest import spark
from tests.spark.kafka_topics import new_topic, produce

__all__ = ["spark"]

pytestmark = [
    pytest.mark.multihost,
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.timeout(900),
]

JOB = "records-to-parquet"
RESTART = {"type": "OnFailure", "onFailureRetries": 2, "onFailureRetryInterval": 1}


def send(broker: KafkaBroker, topic: str, ids: range, phase: int) -> list[int]:
    produce(broker, topic, ((None, json.dumps({"id": i, "phase": phase})) for i in ids))
    return list(ids)


def written_ids(spark: SparkSession, output: Path) -> list[int]:
    """The ids in the committed files of the Parquet output (Spark reads its sink's log)."""
    if not committed_files(output):
        return []
    return [row.id for row in spark.read.parquet(str(output)).select("id").collect()]


def test_a_lost_driver_host_is_restarted_on_the_other_worker_with_each_record_once(
    netns_cluster: NetnsCluster,
    server_in: ServerStarter,
    multihost_kafka: KafkaBroker,
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    server = server_in(netns_cluster.control, tmp_path)
    (root,) = json.loads(server.env["STREAMJOBS_DEFAULT_DATA_ROOTS"])
    output = output_of(Path(urlsplit(root).path), JOB)
    topic = new_topic(multihost_kafka, "lost-worker")
    job = kafka_job(
        JOB, topic, Path(urlsplit(root).path), deploy_mode="cluster", executors=1, restart=RESTART
    )
    sent = send(multihost_kafka, topic, range(0, 30), phase=1)
    with server.client() as api:
        add_tiny_node_type(api)
        store_kafka(api, multihost_kafka)
        put(api, f"/api/v1/jobs/{JOB}", job)
        app_id = run(api, JOB)
        describe = described(api, app_id)

        app = wait_until("the first attempt to run", running_attempt(api, app_id, 1), describe)
        wait_until(
            "the first phase in the output",
            lambda: len(written_ids(spark, output)) >= len(sent),
            describe,
        )
        first = app["attempts"][0]
        first_spark_application = wait_until(
            "the first attempt's Spark application id",
            lambda: application(api, app_id)["sparkApplicationId"],
            describe,
        )
        assert first["deployMode"] == "cluster"
        assert driver_worker_host(netns_cluster, first["submissionId"]) == first["driverHost"]
        lost, other = other_worker(netns_cluster, first["driverHost"])

        sent += send(multihost_kafka, topic, range(30, 230), phase=2)
        wait_until(
            "the second phase to be under way",
            lambda: len(written_ids(spark, output)) >= 50,
            describe,
        )
        netns_cluster.lose_worker(lost)

        app = wait_until("a second attempt to run", running_attempt(api, app_id, 2), describe)
        failed, restarted = app["attempts"]
        assert failed["outcome"] == "failed", app["attempts"]
        assert restarted["driverHost"] == other.address, app["attempts"]
        assert restarted["submissionId"] != failed["submissionId"]
        assert active_driver_ids(netns_cluster) == [restarted["submissionId"]]
        assert driver_worker_host(netns_cluster, restarted["submissionId"]) == other.address
        assert application(api, app_id)["restarts"] == 1
        # The lost driver's application was ended at the master, freeing its executor's core.
        assert first_spark_application not in active_application_ids(netns_cluster)

        sent += send(multihost_kafka, topic, range(230, 260), phase=3)
        wait_until(
            "every record in the output",
            lambda: len(written_ids(spark, output)) >= len(sent),
            describe,
        )
        written = written_ids(spark, output)
        repeated = sorted(i for i, times in Counter(written).items() if times > 1)
        assert repeated == [], f"written more than once: {repeated}"
        assert sorted(written) == sorted(sent)
        assert application(api, app_id)["state"] == "RUNNING"


def test_ending_an_application_at_a_master_that_does_not_answer_says_so(
    netns_cluster: NetnsCluster,
) -> None:
    silent = f"http://{netns_cluster.master.address}:9"  # nothing listens there
    problem = end_application(silent, "app-20260101000000-0000")
    assert problem is not None
    assert problem.startswith(f"the master's web UI at {silent} did not answer"), problem
