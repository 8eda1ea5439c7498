"""The session's cluster of namespace hosts: what ``netns_cluster`` gives the multi-host tests.

A Spark standalone master and two workers (2 cores, 2 GB each), each on its own host of the
session's ``PrivateNetwork``, and a ``control`` host kept free for streamjobs servers (see
``tests/multihost/servers.py``). Every host reaches the bridge's ``.1`` address, where the
session's multi-host Kafka broker and PostgreSQL listen. A test may lose a worker
(``lose_worker``): after it, the worker comes back on a new host of the same name (``restore``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from streamjobs.devtools.netns import Host, PrivateNetwork
from streamjobs.devtools.standalone import StandaloneSpark
from tests.conftest import CLUSTER_JAVA_OPTIONS

MASTER = "master"
WORKERS = ("w1", "w2")
CONTROL = "control"
WORKER_CORES = 2
WORKER_MEMORY = "2g"


@dataclass
class NetnsCluster:
    network: PrivateNetwork
    spark: StandaloneSpark
    master: Host
    control: Host
    """Where streamjobs servers run: no Spark daemon there."""

    @property
    def workers(self) -> tuple[Host, ...]:
        """The hosts of the workers now running (``w1``, ``w2`` unless one was lost)."""
        return tuple(worker.host for worker in self.spark.workers)

    @property
    def master_url(self) -> str:
        return self.spark.master_url

    @property
    def rest_url(self) -> str:
        return self.spark.rest_url

    @property
    def web_url(self) -> str:
        return self.spark.web_url

    @property
    def worker_web_urls(self) -> dict[str, str]:
        return self.spark.worker_web_urls

    @property
    def worker_timeout_seconds(self) -> int:
        return self.spark.worker_timeout_seconds

    def lose_worker(self, host: Host) -> None:
        """Tear down the worker ``host``, with whatever runs there (drivers, executors)."""
        (worker,) = [worker for worker in self.spark.workers if worker.host == host]
        self.spark.lose_worker(worker, self.network)

    def restore(self) -> None:
        """Bring back lost workers (on new hosts of the same names, with new addresses) and a
        lost control host, so that the next test finds the whole cluster."""
        if self.control.name not in self.network.hosts:
            self.control = self.network.add_host(CONTROL)
        running = {worker.host.name for worker in self.spark.workers}
        missing = [name for name in WORKERS if name not in running]
        for name in missing:
            host = self.network.add_host(name)
            self.spark.add_worker(host, cores=WORKER_CORES, memory=WORKER_MEMORY)
        if missing:
            self.spark.wait_until_alive()


def start_netns_cluster(network: PrivateNetwork, directory: Path) -> NetnsCluster:
    """Add the hosts, check they reach each other, start Spark; ready when this returns.
    Whatever started is stopped when it fails."""
    master = network.add_host(MASTER)
    workers = [network.add_host(name) for name in WORKERS]
    control = network.add_host(CONTROL)
    network.verify()
    spark = StandaloneSpark(directory, java_options=CLUSTER_JAVA_OPTIONS)
    try:
        spark.start_master(master)
        for worker in workers:
            spark.add_worker(worker, cores=WORKER_CORES, memory=WORKER_MEMORY)
        spark.wait_until_alive()
    except BaseException:
        spark.stop()
        raise
    return NetnsCluster(network=network, spark=spark, master=master, control=control)
