"""The multi-host fixtures work: namespace hosts reach each other and the services on ``.1``, the
Spark cluster on them is up, a lost host is noticed by the master, servers run on a host."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.devtools.netns import Host, NetworkSetupError, PrivateNetwork
from streamjobs.devtools.standalone import ClusterStartError, StandaloneSpark
from tests.conftest import CLUSTER_JAVA_OPTIONS
from tests.multihost.cluster import NetnsCluster
from tests.multihost.servers import ServerStarter
from tests.services import PostgresServer
from tests.spark.kafka_topics import new_topic, produce

pytestmark = [pytest.mark.multihost, pytest.mark.spark]

_GET = (
    "import sys, urllib.request\n"
    "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())\n"
)
_CONSUME = """
import sys, time, uuid
from confluent_kafka import Consumer
consumer = Consumer({"bootstrap.servers": sys.argv[1], "group.id": uuid.uuid4().hex,
                     "auto.offset.reset": "earliest"})
consumer.subscribe([sys.argv[2]])
values, deadline = [], time.monotonic() + 60
while len(values) < int(sys.argv[3]) and time.monotonic() < deadline:
    message = consumer.poll(0.5)
    if message is not None and message.error() is None:
        values.append(message.value().decode())
consumer.close()
print("\\n".join(values))
"""
_CLIENT_ADDRESS = """
import sys, psycopg
with psycopg.connect(host=sys.argv[1], port=int(sys.argv[2]), user="postgres",
                     dbname=sys.argv[3], connect_timeout=10) as connection:
    print(connection.execute("SELECT host(inet_client_addr())").fetchone()[0])
"""


def run_in(host: Host, *argv: str) -> str:
    """``argv``'s output, run inside ``host``; fails the test with its stderr if it fails."""
    done = subprocess.run(
        host.command(argv), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{argv[:3]} in {host.name} failed: {done.stderr}"
    return done.stdout


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def test_both_workers_are_alive_at_the_master_with_their_cores_and_memory(
    netns_cluster: NetnsCluster,
) -> None:
    workers = {
        entry["host"]: entry
        for entry in netns_cluster.spark.workers_at_master()
        if entry["state"] == "ALIVE"
    }
    assert workers.keys() == {host.address for host in netns_cluster.workers}
    assert {(entry["cores"], entry["memory"]) for entry in workers.values()} == {(2, 2048)}
    assert netns_cluster.master_url == f"spark://{netns_cluster.master.address}:7077"
    assert len({netns_cluster.master.address, netns_cluster.control.address, *workers}) == 4


def test_the_daemons_hold_the_cluster_s_jvm_options_for_the_jvms_they_start(
    netns_cluster: NetnsCluster,
) -> None:
    """Executors and cluster-mode drivers inherit their worker's environment, so
    ``JDK_JAVA_OPTIONS`` there reaches every JVM of the cluster."""
    daemons = [netns_cluster.spark.master, *(w.daemon for w in netns_cluster.spark.workers)]
    for daemon in daemons:
        assert daemon is not None
        environ = Path(f"/proc/{daemon.process.pid}/environ").read_bytes().split(b"\0")
        assert f"JDK_JAVA_OPTIONS={CLUSTER_JAVA_OPTIONS}".encode() in environ, daemon.host.name


def test_the_workers_web_uis_and_the_rest_server_answer_from_the_control_host(
    netns_cluster: NetnsCluster,
) -> None:
    for url in netns_cluster.worker_web_urls.values():
        page = run_in(netns_cluster.control, sys.executable, "-c", _GET, f"{url}/json/")
        worker = json.loads(page)
        assert worker["masterurl"] == netns_cluster.master_url
        assert worker["cores"] == 2
    # Without a protocol version the REST server answers 400 with its own error document.
    refused = httpx.get(netns_cluster.rest_url, timeout=10)
    assert refused.status_code == 400
    assert refused.json()["action"] == "ErrorResponse"


@pytest.mark.kafka
def test_kafka_on_the_bridge_is_reached_from_a_worker_host(
    netns_cluster: NetnsCluster, multihost_kafka: KafkaBroker
) -> None:
    assert multihost_kafka.bootstrap_servers.startswith(f"{netns_cluster.network.gateway}:")
    topic = new_topic(multihost_kafka, "netns")
    produce(multihost_kafka, topic, [("a", "one"), ("b", "two"), ("c", "three")])
    consumed = run_in(
        netns_cluster.workers[0],
        *(sys.executable, "-c", _CONSUME, multihost_kafka.bootstrap_servers, topic, "3"),
    )
    assert sorted(consumed.split()) == ["one", "three", "two"]


@pytest.mark.postgres
def test_postgres_on_the_bridge_accepts_a_host_of_the_network(
    netns_cluster: NetnsCluster, multihost_postgres: PostgresServer
) -> None:
    database = multihost_postgres.create_database()
    try:
        client_address = run_in(
            netns_cluster.control,
            sys.executable,
            "-c",
            _CLIENT_ADDRESS,
            multihost_postgres.listen_address,
            str(multihost_postgres.port),
            database,
        )
    finally:
        multihost_postgres.drop_database(database)
    assert client_address.strip() == netns_cluster.control.address


def test_a_lost_worker_host_is_reported_dead_then_restored(netns_cluster: NetnsCluster) -> None:
    spark = netns_cluster.spark
    first, lost = spark.workers
    netns_cluster.lose_worker(lost.host)
    assert lost.host.namespace not in namespaces()
    assert netns_cluster.workers == (first.host,)
    deadline = time.monotonic() + 3 * netns_cluster.worker_timeout_seconds + 30
    while spark.worker_state(lost) != "DEAD" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert spark.worker_state(lost) == "DEAD", spark.workers_at_master()
    assert spark.worker_state(first) == "ALIVE"

    netns_cluster.restore()
    (restored,) = [host for host in netns_cluster.workers if host.name == lost.host.name]
    assert restored.address != lost.host.address
    alive = {entry["host"] for entry in spark.workers_at_master() if entry["state"] == "ALIVE"}
    assert alive == {first.host.address, restored.address}


def test_a_server_runs_on_the_control_host_and_is_reached_from_a_worker_host(
    netns_cluster: NetnsCluster, server_in: ServerStarter, tmp_path: Path
) -> None:
    server = server_in(netns_cluster.control, tmp_path)
    assert server.url.startswith(f"http://{netns_cluster.control.address}:")
    assert server.env["STREAMJOBS_SPARK_MASTER"] == netns_cluster.master_url
    health = run_in(netns_cluster.workers[0], sys.executable, "-c", _GET, f"{server.url}/healthz")
    assert health.strip()
    with server.client(timeout=3) as api:
        assert api.get("/api/v1/jobs").status_code == 200
        server.pause()
        with pytest.raises(httpx.TimeoutException):
            api.get("/api/v1/jobs")
        server.resume()
        assert api.get("/api/v1/jobs").status_code == 200
    assert server.stop() in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled
    assert "Application shutdown complete" in server.console.read_text()


def test_closing_a_network_removes_its_hosts_their_processes_and_its_bridge() -> None:
    network = PrivateNetwork().start()
    try:
        host = network.add_host("alone")
        sleeper = subprocess.Popen(host.command(["sleep", "600"]))
        assert host.namespace in namespaces()
    finally:
        network.close()
    assert sleeper.wait(timeout=30) == -9
    assert host.namespace not in namespaces()
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True)
    assert network.bridge not in links.stdout
    network.close()  # a second close has nothing left to do


def test_verify_names_the_host_whose_cable_is_cut() -> None:
    with PrivateNetwork() as network:
        connected = network.add_host("connected")
        cut = network.add_host("cut")
        network.verify()
        subprocess.run(["ip", "link", "set", cut.veth, "down"], check=True)
        with pytest.raises(NetworkSetupError) as refused:
            network.verify()
        assert f"from connected: {cut.address}:" in str(refused.value)
        assert "from cut: " in str(refused.value)
        assert connected.name in network.hosts


def test_bad_host_names_and_worker_sizes_are_refused_naming_what_is_wrong(
    netns_cluster: NetnsCluster, tmp_path: Path
) -> None:
    network = netns_cluster.network
    with pytest.raises(NetworkSetupError, match="host name 'Bad_Name'"):
        network.add_host("Bad_Name")
    with pytest.raises(NetworkSetupError, match="host name 'w1': the network has a host"):
        network.add_host("w1")
    spark = StandaloneSpark(tmp_path)
    with pytest.raises(ClusterStartError, match="memory: '2x'"):
        spark.add_worker(netns_cluster.control, memory="2x")
    with pytest.raises(ClusterStartError, match="cores: 0"):
        spark.add_worker(netns_cluster.control, cores=0)
    with pytest.raises(ClusterStartError, match="worker_timeout_seconds: 0"):
        StandaloneSpark(tmp_path, worker_timeout_seconds=0)
