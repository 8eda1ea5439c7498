"""The Spark settings derived for a job's driver."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from streamjobs.domain.spark_conf import DELTA_SNAPSHOT_PARTITIONS, local_cores, session_conf
from streamjobs.domain.spec import parse_manifest
from tests.factories import pipeline_manifest

REPOSITORY = PurePosixPath("/m2")


@pytest.mark.parametrize(
    ("master", "cores"),
    [
        ("local[2]", 2),
        ("local[4,3]", 4),
        ("local", 1),
        ("local[*]", None),
        ("spark://h:7077", None),
    ],
)
def test_local_cores(master: str, cores: int | None) -> None:
    assert local_cores(master) == cores


def delta_job(**spark_conf: str) -> dict[str, object]:
    manifest = pipeline_manifest()
    manifest["spec"]["pipeline"]["outputs"][0].update(format="delta")
    manifest["spec"]["configuration"] = {"sparkConf": spark_conf}
    return manifest


def test_a_single_node_delta_job_reads_its_log_with_one_task_per_core() -> None:
    job = parse_manifest(delta_job())
    conf = session_conf(job, connections=(), maven_repository=REPOSITORY, cores=2)
    assert conf[DELTA_SNAPSHOT_PARTITIONS] == "2"
    assert "io.delta:delta-spark" in conf["spark.jars.packages"]
    on_a_cluster = session_conf(job, connections=(), maven_repository=REPOSITORY)
    assert DELTA_SNAPSHOT_PARTITIONS not in on_a_cluster


def test_the_jobs_own_spark_conf_wins() -> None:
    job = parse_manifest(delta_job(**{DELTA_SNAPSHOT_PARTITIONS: "8"}))
    conf = session_conf(job, connections=(), maven_repository=REPOSITORY, cores=2)
    assert conf[DELTA_SNAPSHOT_PARTITIONS] == "8"


def test_kafka_jobs_take_the_token_provider_from_the_local_repository() -> None:
    manifest = pipeline_manifest()
    manifest["spec"]["pipeline"]["inputs"][0].update(
        format="kafka", path="orders", options={"kafka.bootstrap.servers": "h:1"}
    )
    conf = session_conf(parse_manifest(manifest), connections=(), maven_repository=REPOSITORY)
    assert conf["spark.jars"].startswith("/m2/org/apache/spark/spark-token-provider-kafka")
