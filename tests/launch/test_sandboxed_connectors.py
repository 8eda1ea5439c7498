"""Connector pipelines through the real launcher in their sandbox: Kafka in, Delta out.

The connectors' jars come through Spark's resolver inside the sandbox (the identity's home holds
its cache, the server's Maven repository is bound read-only as its ``~/.m2/repository``), and
the Kafka token provider from the Maven repository as a local jar: the paths the isolation
changes for every Kafka, Delta and Iceberg job.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.domain.connections import parse_connection
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from tests.factories import connection_manifest
from tests.launch.conftest import TOOLCHAIN, Drivers, attempt_for
from tests.spark.kafka_topics import produce_json
from tests.spark.pipelines import pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.kafka]
ROWS = 20


@pytest.mark.usefixtures("java")
def test_a_kafka_to_delta_pipeline_runs_in_its_sandbox(
    drivers: Drivers, tmp_path: Path, kafka_broker: KafkaBroker
) -> None:
    topic = f"sandboxed-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    produce_json(
        kafka_broker, topic, ({"id": number, "amount": number * 10} for number in range(ROWS))
    )
    kafka = parse_connection(
        connection_manifest("kafka-main", bootstrapServers=kafka_broker.bootstrap_servers)
    )
    data = tmp_path / "data"
    manifest = pipeline_job(
        "kafka-to-delta",
        checkpointLocation=(data / "checkpoint").as_uri(),
        inputs=[
            {
                "name": "orders",
                "dataset": f"kafka-main:{topic}",
                "format": "kafkajson",
                "schema": "id BIGINT, amount BIGINT",
                "options": {"startingOffsets": "earliest"},
            }
        ],
        steps=[[("big", "SELECT id, amount FROM orders WHERE amount >= 100")]],
        outputs=[{"name": "big", "format": "delta", "path": (data / "orders").as_uri()}],
        guarantee="EXACTLY_ONCE",
    )
    sandbox = BubblewrapSandbox(
        hidden=[tmp_path / "home"], identity_homes=tmp_path / "identities", toolchain=TOOLCHAIN
    )
    attempt = attempt_for(
        manifest,
        tmp_path / "home" / "apps" / "app-1" / "1",
        connections=(kafka,),
        run_as="alice",
        data_roots=(data.as_uri(),),
    )

    launcher = LocalLauncher(toolchain=TOOLCHAIN, sandbox=sandbox)
    handle = drivers.submit(launcher, attempt)
    code = drivers.wait_exited(launcher, handle, timeout=300)

    log = (Path(handle.directory) / "stderr.log").read_text(errors="replace")[-3000:]
    assert code == 0, log
    assert written_rows(data / "orders") == ROWS // 2, log


def written_rows(table: Path) -> int:
    """Rows the Delta table's log says its files hold (each add action's ``numRecords``)."""
    rows = 0
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                rows += json.loads(action["add"]["stats"])["numRecords"]
    return rows
