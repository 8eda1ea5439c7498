"""Fixtures and markers shared by every test package.

Markers say which real service a test needs, so a run can select or skip them (``-m postgres``,
``-m "not postgres"``). Service fixtures skip their tests when the service is not installed, except
in CI (``CI=true``), where a missing service is a failure: CI must run everything.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

from streamjobs.composition import build_server
from streamjobs.devtools.class_data import fast_start_options
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from tests.kafka_fixture import kafka_broker  # noqa: F401 - a fixture for every package
from tests.live_server import live_server
from tests.services import PostgresServer, ServiceUnavailableError, find_postgres_bin_dir

TEST_DATA_ROOTS = [
    "file:///tmp/out",
    "file:///tmp/streamjobs",
    "file:///tmp/streamjobs-web",
    "file:///tmp/lakehouse",
    "file:///tmp/landing",
    "file:///checkpoints",
    "file:///data",
    "file:///lake",
]
"""The data roots of the ``default`` bundle of every server the tests start (subprocess servers
inherit the variable): where the tests' manifests read and write."""
os.environ.setdefault("STREAMJOBS_DEFAULT_DATA_ROOTS", json.dumps(TEST_DATA_ROOTS))

TEST_PASSWORD_COST = os.environ.setdefault("STREAMJOBS_PASSWORD_COST", "m=1024,t=1,p=1")
"""The Argon2id cost of the tests' password hashes (servers the tests start inherit the
variable): about 1 ms a check instead of 0.1 s, which a quarter of the API tests' time went to.
A test of what the real cost does asks for ``DEFAULT_PASSWORD_COST``."""

CLASS_DATA_ARCHIVE = Path(sys.prefix) / "spark-classes.jsa"
"""Spark's classes as a driver loads them (``make test`` writes it; ``devtools.class_data``),
in the virtualenv, which every driver's sandbox can read."""
TEST_JAVA_OPTIONS = os.environ.setdefault(
    "STREAMJOBS_DRIVER_JAVA_OPTIONS", fast_start_options(CLASS_DATA_ARCHIVE)
)
"""The JVM options of every driver the tests start, for quicker starts: they change how fast, not
what, a driver runs. Servers the tests start take them from the variable, which they inherit."""
SESSION_JAVA_OPTIONS = fast_start_options(CLASS_DATA_ARCHIVE, quick_compiler=False)
"""The long-lived in-process sessions' options: the archive only, since their JIT pays off."""
CLUSTER_JAVA_OPTIONS = fast_start_options(None)
"""The standalone clusters' daemons, and the executors and cluster-mode drivers their workers
start: the quick compiler only, since the archive's classpath is a driver's, not theirs."""

MARKERS = {
    "spark": "runs real Spark (local[2]) in the shared test session; slower",
    "kafka": "needs a real Kafka broker (kafka_broker fixture: java + mvn)",
    "postgres": "needs a real PostgreSQL server (started by the postgres_server fixture)",
    "snapshots": "snapshots, starts from a snapshot, upgrades and the look inside a job's state",
    "browser": "drives Debian's Chromium (/usr/bin/chromium) with Playwright against a real server",
    "multihost": "runs across hosts made of network namespaces (tests/multihost: root, ip netns)",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test for lack of ``reason``'s service; in CI, fail it instead."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: every service must be available)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test session, deleted at its end."""
    try:
        server = PostgresServer.start(find_postgres_bin_dir())
    except ServiceUnavailableError as missing:
        skip_or_fail(str(missing))
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database of each backend: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'streamjobs.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The SQLAlchemy URL of a new, empty database, dropped after the test."""
    name = postgres_server.create_database()
    yield postgres_server.url_for(name)
    postgres_server.drop_database(name)


@dataclass(frozen=True)
class RunningServer:
    url: str
    admin_token: str
    services: Services
    home: Path


@pytest.fixture(scope="session")
def running_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    home = tmp_path_factory.mktemp("server-home")
    server = build_server(
        Settings(home=home, checkpoint_root="file:///checkpoints"), supervise=False
    )
    services = server.services
    token = services.identity.bootstrap_admin().token
    assert token is not None
    with live_server(server) as url:
        yield RunningServer(url=url, admin_token=token, services=services, home=home)


@pytest.fixture
def api(running_server: RunningServer) -> Iterator[httpx.Client]:
    """An HTTP client that signs in as admin."""
    headers = {"Authorization": f"Bearer {running_server.admin_token}"}
    with httpx.Client(base_url=running_server.url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def anonymous(running_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=running_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def job_name() -> str:
    """A job name no other test uses, since the server is shared."""
    return f"job-{uuid.uuid4().hex[:10]}"
