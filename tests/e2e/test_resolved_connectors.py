"""Connector jars are the server's business: a real server, empty jar caches, real Kafka.

Each test starts ``streamjobs server`` on a fresh home with a Maven repository and an Ivy
directory of its own, both empty (``STREAMJOBS_MAVEN_REPOSITORY``, ``STREAMJOBS_IVY_DIRECTORY``),
so whatever jar a driver gets is one the server resolved itself, from Maven Central: nothing
from the user's ``~/.m2`` or ``~/.ivy2.5.2``, nothing ``make test`` fetched. Drivers run in their
sandbox, as the server runs them by default.

- The Kafka example (``examples/kafka-json-to-delta.yaml``) reads a real broker into Delta up to
  a committed batch.
- Spark's own ``structured_kafka_wordcount.py`` (in ``spark_examples/``, unmodified, with its
  licence) runs as a python job naming the Kafka connector in ``dependencies.packages``, and
  its counts reach the driver's stdout log.
- A coordinate that does not exist fails the submission naming it, and Run then refuses the job.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.launch.ports import free_loopback_port
from tests.e2e.test_server_process import EXAMPLES, STREAMJOBS, streamjobs, wait_until_healthy
from tests.launch.test_sandboxed_connectors import written_rows
from tests.spark.kafka_topics import produce, produce_json

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.timeout(900)]
WAIT_SECONDS = 600.0
"""Long: the first resolution downloads every connector jar from Maven Central."""
KAFKA_CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.3"
WORDCOUNT = Path(__file__).parent / "spark_examples" / "structured_kafka_wordcount.py"
NO_SUCH_PACKAGE = "org.example.streamjobs:no-such-connector_2.13:9.9.9"
ORDERS = 20


class Server:
    """A ``streamjobs server`` process with its own home, store and jar caches."""

    def __init__(self, root: Path) -> None:
        self.root = root
        port = free_loopback_port()
        self.env = {
            **os.environ,
            "STREAMJOBS_HOME": str(root / "home"),
            "STREAMJOBS_PORT": str(port),
            "STREAMJOBS_DATABASE_URL": f"sqlite:///{root / 'store.db'}",
            "STREAMJOBS_DEFAULT_DATA_ROOTS": json.dumps([(root / "data").as_uri()]),
            "STREAMJOBS_MAVEN_REPOSITORY": str(root / "m2"),
            "STREAMJOBS_IVY_DIRECTORY": str(root / "ivy"),
            "STREAMJOBS_IDENTITY_HOMES": str(root / "identities"),
        }
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[str] | None = None
        self.token = ""

    def start(self) -> None:
        assert streamjobs(self.env, "admin", "bootstrap").returncode == 0
        self.token = (self.root / "home" / "admin-token").read_text().strip()
        self.process = subprocess.Popen(
            [*STREAMJOBS, "server"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        wait_until_healthy(self.url, self.process)

    def stop(self) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        for process in psutil.process_iter(["cmdline"]):
            if any(str(self.root / "home") in part for part in process.info["cmdline"] or []):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def wait_for(what: str, check: Callable[[], Any], describe: Callable[[], str]) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1)
    raise AssertionError(f"waited {WAIT_SECONDS:g} s for {what}: {describe()}")


def application(api: httpx.Client, application_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = api.get(f"/api/v1/applications/{application_id}").json()
    return answer


def events(api: httpx.Client, application_id: str) -> list[tuple[str, str]]:
    answer = api.get(f"/api/v1/applications/{application_id}/events").json()
    items = answer["items"] if isinstance(answer, dict) else answer
    return [(event["kind"], event["message"]) for event in items]


def log(api: httpx.Client, application_id: str, instance: str) -> str:
    answer = api.get(
        f"/api/v1/applications/{application_id}/logs", params={"instance": instance, "tail": 400}
    )
    return str(answer.json().get("text", "")) if answer.is_success else ""


def ended_or(api: httpx.Client, application_id: str, check: Callable[[], bool]) -> bool:
    """``check()``, failing at once when the application ended first."""
    state = application(api, application_id)["state"]
    if state in {"FAILED", "COMPLETED", "ABORTED", "STOPPED"}:
        raise AssertionError(
            f"{application_id} ended {state}: {application(api, application_id)['errorMessage']}\n"
            f"{events(api, application_id)}\n{log(api, application_id, 'driver')[-3000:]}"
        )
    return check()


def test_the_kafka_example_runs_with_only_the_jars_the_server_resolved(
    server: Server, kafka_broker: KafkaBroker
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    produce_json(
        kafka_broker,
        topic,
        (
            {
                "order_id": number,
                "customer_id": 7,
                "amount": 12.5,
                "currency": "eur",
                "created_at": "2026-11-25T10:00:00",
            }
            for number in range(1, ORDERS + 1)
        ),
    )
    job = copy.deepcopy(yaml.safe_load((EXAMPLES / "kafka-json-to-delta.yaml").read_text()))
    pipeline = job["spec"]["pipeline"]
    pipeline["inputs"][0]["dataset"] = f"kafka-main:{topic}"
    pipeline["streaming"]["triggerDuration"] = "1 second"
    job["spec"]["restartPolicy"] = {"type": "Never"}
    lakehouse = (server.root / "data" / "lakehouse").as_uri()
    table = server.root / "data" / "lakehouse" / "raw" / "orders"

    with server.client() as api:
        for connection in yaml.safe_load_all((EXAMPLES / "connections.yaml").read_text()):
            name = connection["metadata"]["name"]
            if name == "kafka-main":
                connection["spec"]["bootstrapServers"] = kafka_broker.bootstrap_servers
            elif name == "lakehouse":
                connection["spec"]["warehouse"] = lakehouse
            else:
                continue
            answer = api.put(f"/api/v1/connections/{name}", json=connection)
            assert answer.is_success, answer.text
        assert api.put("/api/v1/jobs/orders-to-lake", json=job).is_success
        started = api.post("/api/v1/jobs/orders-to-lake/run")
        assert started.status_code == 201, started.text
        app_id = started.json()["id"]

        def committed() -> bool:
            kinds = [kind for kind, _ in events(api, app_id)]
            return "first-batch-committed" in kinds and written_rows(table) == ORDERS

        wait_for(
            "a committed batch with rows",
            lambda: ended_or(api, app_id, committed),
            lambda: f"{events(api, app_id)}\n{log(api, app_id, 'driver')[-3000:]}",
        )
        kinds = [kind for kind, _ in events(api, app_id)]
        assert (
            kinds.index("jars-resolving") < kinds.index("jars-resolved") < kinds.index("submitted")
        )

    token_provider = server.root / "m2/org/apache/spark/spark-token-provider-kafka-0-10_2.13"
    assert (token_provider / "4.0.0/spark-token-provider-kafka-0-10_2.13-4.0.0.jar").is_file()
    assert list((server.root / "ivy" / "jars").glob("io.delta_delta-spark_*.jar"))


def test_sparks_own_kafka_wordcount_runs_as_a_python_job_with_the_connector_package(
    server: Server, kafka_broker: KafkaBroker
) -> None:
    topic = f"words-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    job = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "kafka-wordcount"},
        "spec": {
            "application": {
                "type": "python",
                "mainApplicationFile": WORDCOUNT.as_uri(),
                "arguments": [kafka_broker.bootstrap_servers, "subscribe", topic],
            },
            "dependencies": {"packages": [KAFKA_CONNECTOR]},
            # Its running count is stateful: a few partitions, not 200, on a driver's one core.
            "configuration": {"sparkConf": {"spark.sql.shuffle.partitions": "2"}},
            "restartPolicy": {"type": "Never"},
        },
    }
    with server.client() as api:
        answer = api.put("/api/v1/jobs/kafka-wordcount", json=job)
        assert answer.is_success, answer.text
        started = api.post("/api/v1/jobs/kafka-wordcount/run")
        assert started.status_code == 201, started.text
        app_id = started.json()["id"]

        def counted() -> bool:
            # The example reads from the latest offsets: keep writing until a batch counts them.
            produce(kafka_broker, topic, [(None, "streamjobs counts words streamjobs")])
            stdout = log(api, app_id, "driver-stdout")
            return "|streamjobs|" in stdout.replace(" ", "")

        wait_for(
            "the word counts in the driver's stdout",
            lambda: ended_or(api, app_id, counted),
            lambda: f"{events(api, app_id)}\n{log(api, app_id, 'driver')[-3000:]}",
        )
        stdout = log(api, app_id, "driver-stdout")
        assert "|word" in stdout.replace(" ", "")
        assert "|count|" in stdout.replace(" ", "")
        kinds = [kind for kind, _ in events(api, app_id)]
        assert "jars-resolved" in kinds


def test_a_package_that_does_not_exist_fails_the_submission_and_then_the_run(
    server: Server,
) -> None:
    job = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "missing-connector"},
        "spec": {
            "application": {"type": "python", "mainApplicationFile": WORDCOUNT.as_uri()},
            "dependencies": {"packages": [NO_SUCH_PACKAGE]},
            "restartPolicy": {"type": "Never"},
        },
    }
    with server.client() as api:
        assert api.put("/api/v1/jobs/missing-connector", json=job).is_success
        app_id = api.post("/api/v1/jobs/missing-connector/run").json()["id"]

        failed = wait_for(
            "the failed submission",
            lambda: application(api, app_id)["state"] == "FAILED",
            lambda: str(events(api, app_id)),
        )
        assert failed
        error = application(api, app_id)["errorMessage"]
        assert error == (
            f"cannot resolve the job's jars: unresolved dependency {NO_SUCH_PACKAGE} (not found)"
        )
        attempt = Path(server.env["STREAMJOBS_HOME"]) / "apps" / app_id / "1"
        assert not (attempt / "stderr.log").exists(), "no driver was started"

        refused = api.post("/api/v1/jobs/missing-connector/run")
        assert refused.status_code == 409, refused.text
        assert NO_SUCH_PACKAGE in refused.json()["detail"]
