"""Fixtures of the multi-host tests: a private network of namespace hosts, a Spark standalone
cluster on it, Kafka and PostgreSQL on its ``.1`` address, and streamjobs servers on its hosts.

Building the network needs root and ``ip netns``; without them these tests are skipped, except
in CI (``CI=true``), where they fail. Everything is session-scoped but ``server_in`` and
``multihost_postgres_url``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.devtools.maven import ResolutionError, ToolUnavailableError
from streamjobs.devtools.netns import PrivateNetwork, namespace_support_problem
from tests.conftest import skip_or_fail
from tests.multihost.cluster import NetnsCluster, start_netns_cluster
from tests.multihost.servers import ServerStarter
from tests.services import PostgresServer, ServiceUnavailableError, find_postgres_bin_dir


@pytest.fixture(scope="session")
def private_network() -> Iterator[PrivateNetwork]:
    """A bridge with the ``.1`` address of a private /24; hosts are added by the fixtures and
    tests that need them. Everything is removed at the end of the session."""
    problem = namespace_support_problem()
    if problem is not None:
        skip_or_fail(f"the multi-host tests need network namespaces: {problem}")
    network = PrivateNetwork().start()
    try:
        yield network
    finally:
        network.close()


@pytest.fixture(scope="session")
def netns_cluster(
    private_network: PrivateNetwork, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NetnsCluster]:
    """A Spark master (host ``master``) and two workers (``w1``, ``w2``, 2 cores and 2 GB
    each), all ALIVE, and the ``control`` host for streamjobs servers."""
    if shutil.which("java") is None:
        skip_or_fail("java is not installed, so Spark cannot run")
    cluster = start_netns_cluster(private_network, tmp_path_factory.mktemp("netns-spark"))
    try:
        yield cluster
    finally:
        cluster.spark.stop()


@pytest.fixture(autouse=True)
def _whole_cluster_for_each_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that lost a worker or the control host, bring them back."""
    yield
    if "netns_cluster" in request.fixturenames:
        cluster: NetnsCluster = request.getfixturevalue("netns_cluster")
        cluster.restore()


@pytest.fixture(scope="session")
def multihost_kafka(private_network: PrivateNetwork) -> Iterator[KafkaBroker]:
    """A Kafka broker listening (and advertised) on the bridge's ``.1`` address."""
    try:
        broker = KafkaBroker(host=private_network.gateway).start()
    except (ToolUnavailableError, ResolutionError) as missing:
        skip_or_fail(f"cannot start a Kafka broker: {missing}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def multihost_postgres(private_network: PrivateNetwork) -> Iterator[PostgresServer]:
    """A PostgreSQL server on the bridge's ``.1`` address, trusting the network's hosts."""
    try:
        server = PostgresServer.start(
            find_postgres_bin_dir(), listen_address=private_network.gateway
        )
    except ServiceUnavailableError as missing:
        skip_or_fail(str(missing))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def multihost_postgres_url(multihost_postgres: PostgresServer) -> Iterator[str]:
    """The SQLAlchemy URL (on ``.1``) of a new, empty database, dropped after the test."""
    name = multihost_postgres.create_database()
    yield multihost_postgres.url_for(name)
    multihost_postgres.drop_database(name)


@pytest.fixture
def server_in(netns_cluster: NetnsCluster) -> Iterator[ServerStarter]:
    """``server_in(host, tmp_path, *, env_overrides=None, database_url=None)`` starts a
    ``streamjobs server`` on ``host``; all are killed with their drivers after the test."""
    starter = ServerStarter(netns_cluster)
    try:
        yield starter
    finally:
        starter.kill_all()
