"""Two servers on one store, each with its supervisor, the fake launcher (one host: both see the
same drivers) and one fake clock: only the holder of the lease ticks; a takeover re-attaches to
the drivers the store records and starts no second one; a server that lost the lease stops; a
tick under a stale token writes nothing; a driver started on another host is judged by its
reports. On SQLite a second supervising server is refused."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from streamjobs.composition import Server, build_server
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.states import AppState
from streamjobs.launch.fake import FakeLauncher
from streamjobs.settings import Settings
from streamjobs.store.db import Store
from streamjobs.store.lease_tables import SupervisorLeaseRow
from streamjobs.store.leases import SUPERVISOR_LEASE, Leader
from streamjobs.store.tables import ApplicationAttemptRow
from streamjobs.supervisor.leadership import Leadership
from streamjobs.supervisor.server import supervisor_for
from streamjobs.supervisor.single_server import SupervisorRefused
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import started

HEARTBEAT_TIMEOUT = 60
ON_FAILURE_ONCE = {"type": "OnFailure", "onFailureRetries": 1, "onFailureRetryInterval": 5}


@dataclass
class Servers:
    """Servers built on one store; ``world(name)`` builds (or gives) the one named so."""

    database_url: str
    home: Path
    clock: FakeClock = field(default_factory=FakeClock)
    launcher: FakeLauncher = field(default_factory=FakeLauncher)
    built: dict[str, Server] = field(default_factory=dict)

    def world(self, name: str) -> World:
        server = self.built.get(name) or self._build(name)
        assert server.supervisor is not None
        return World(
            services=server.services,
            launcher=self.launcher,
            clock=self.clock,
            supervisor=server.supervisor,
        )

    def leadership(self, name: str) -> Leadership:
        leadership = self.world(name).supervisor.leadership
        assert isinstance(leadership, Leadership)
        return leadership

    def _build(self, name: str) -> Server:
        settings = Settings(
            home=self.home,
            database_url=self.database_url,
            public_url=f"http://{name}.example:8040",
            server_name=name,
            heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT,
        )
        server = build_server(
            settings,
            clock=self.clock,
            launchers={Deployment.SINGLE_NODE: self.launcher},
            supervise=True,
            executor_reader=lambda handle: None,
        )
        self.built[name] = server
        return server

    def close(self) -> None:
        for server in self.built.values():
            server.close()


@pytest.fixture
def servers(postgres_url: str, tmp_path: Path) -> Iterator[Servers]:
    """Servers on one PostgreSQL store."""
    built = Servers(postgres_url, tmp_path / "home")
    yield built
    built.close()


@pytest.fixture
def one_store(database_url: str, tmp_path: Path) -> Iterator[Servers]:
    """Servers on a store of each backend."""
    built = Servers(database_url, tmp_path / "home")
    yield built
    built.close()


def run_out_lease(store: Store) -> None:
    """Let the lease's time pass on the database's clock, as when its holder died."""
    with store.engine.begin() as connection:
        connection.execute(
            update(SupervisorLeaseRow)
            .where(SupervisorLeaseRow.name == SUPERVISOR_LEASE)
            .values(expires_at=datetime(2020, 1, 1, tzinfo=UTC))
        )


def attempts_of(world: World, application_id: str) -> list[int]:
    history = world.services.applications.get(application_id, actor=ALICE)
    return [attempt.number for attempt in history.attempts]


@pytest.mark.postgres
def test_only_the_holder_of_the_lease_ticks(servers: Servers) -> None:
    alpha, beta = servers.world("alpha"), servers.world("beta")
    name = alpha.create_job()
    application = alpha.services.applications.run(name, actor=ALICE)

    alpha.tick()  # the first to ask leads
    assert beta.supervisor.run_once() == []
    assert beta.supervisor.run_once() == []

    assert len(servers.launcher.drivers) == 1
    assert servers.leadership("alpha").role() == "leader"
    assert servers.leadership("beta").role() == "standby"
    alpha_at = Leader("alpha", "http://alpha.example:8040")
    assert servers.leadership("beta").leader() == alpha_at
    assert servers.leadership("alpha").leader() == alpha_at
    assert alpha.app(application.id).state is AppState.STARTING


@pytest.mark.postgres
def test_a_takeover_reattaches_to_the_recorded_driver_and_carries_the_policy_on(
    servers: Servers,
) -> None:
    alpha = servers.world("alpha")
    application_id = started(alpha, restartPolicy=ON_FAILURE_ONCE)
    servers.launcher.exit(-1, 1)
    alpha.tick()  # the first failure: alpha schedules the one restart the policy allows
    alpha.tick(5)
    alpha.report(application_id, {"type": "heartbeat"})
    alpha.tick()
    assert alpha.app(application_id).state is AppState.RUNNING
    assert len(servers.launcher.drivers) == 2

    # alpha dies without a word: its lease runs out, beta takes over.
    run_out_lease(alpha.services.store)
    beta = servers.world("beta")
    beta.tick()
    beta.tick(1)
    assert servers.leadership("beta").role() == "leader"
    assert len(servers.launcher.drivers) == 2, "the live driver is adopted, not started again"
    assert beta.app(application_id).state is AppState.RUNNING
    assert attempts_of(beta, application_id) == [1, 2]

    # The next failure is beta's to judge, with the count alpha left: no retry is left.
    servers.launcher.exit(-1, 1)
    beta.tick()
    beta.tick(10)
    app = beta.app(application_id)
    assert app.state is AppState.FAILED
    assert (app.execution_failures, app.restarts) == (2, 1)
    assert len(servers.launcher.drivers) == 2


@pytest.mark.postgres
def test_a_server_that_lost_the_lease_stops_ticking(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    alpha, beta = servers.world("alpha"), servers.world("beta")
    alpha.tick()
    run_out_lease(alpha.services.store)
    beta.tick()
    name = alpha.create_job()
    application = alpha.services.applications.run(name, actor=ALICE)

    with caplog.at_level(logging.WARNING, logger="streamjobs.supervisor"):
        assert alpha.supervisor.run_once() == []
    assert servers.leadership("alpha").role() == "standby"
    assert "a write was refused because another server leads now" in caplog.text
    assert "beta (http://beta.example:8040) holds it under token 2" in caplog.text
    assert "alpha stops supervising" in caplog.text
    assert servers.launcher.drivers == []

    beta.tick()
    assert [driver.attempt.application_id for driver in servers.launcher.drivers] == [
        application.id
    ]


@pytest.mark.postgres
def test_a_stopped_server_gives_the_lease_up_at_once(servers: Servers) -> None:
    alpha, beta = servers.world("alpha"), servers.world("beta")
    alpha.tick()
    alpha.supervisor.stop()
    beta.tick()
    assert servers.leadership("beta").role() == "leader"


class StaleLeadership:
    """A leadership that still believes in the token it once had (a paused server's view)."""

    def __init__(self, token: int) -> None:
        self._token: int | None = token
        self.lost_tokens: list[int] = []

    @property
    def token(self) -> int | None:
        return self._token

    @property
    def lease_seconds(self) -> float:
        return 15.0

    def refresh(self) -> int | None:
        return self._token

    def lost(self, token: int) -> None:
        self.lost_tokens.append(token)
        self._token = None

    def start(self, on_change: Callable[[], None]) -> None:
        return None

    def stop(self) -> None:
        return None


def test_a_tick_under_a_token_that_moved_on_writes_nothing(
    one_store: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    alpha = one_store.world("alpha")
    alpha.tick()
    token = one_store.leadership("alpha").token
    assert token is not None
    name = alpha.create_job()
    application = alpha.services.applications.run(name, actor=ALICE)
    with alpha.services.store.transaction() as repos:  # another server takes the lease over
        repos.leases.seize(SUPERVISOR_LEASE, "beta", "http://beta.example:8040", 60)
    stale = StaleLeadership(token)
    paused = supervisor_for(
        alpha.services,
        executor_reader=lambda handle: None,
        leadership=stale,
    )

    with caplog.at_level(logging.WARNING, logger="streamjobs.store.leases"):
        assert paused.run_once() == []
    assert stale.lost_tokens == [token]
    assert "a write was refused because another server leads now" in caplog.text
    assert one_store.launcher.drivers == []
    assert alpha.app(application.id).submission_attempts == 0
    assert attempts_of(alpha, application.id) == []
    assert alpha.events(application.id) == ["run-requested"]
    assert paused.run_once() == [], "and it ticks no more"


def mark_launched_on(store: Store, application_id: str, host: str) -> None:
    """Record the application's attempts as started by a server on ``host``."""
    with store.engine.begin() as connection:
        connection.execute(
            update(ApplicationAttemptRow)
            .where(ApplicationAttemptRow.application_id == application_id)
            .values(launched_on=host)
        )


def test_a_driver_started_on_another_host_is_judged_by_its_reports(one_store: Servers) -> None:
    world = one_store.world("alpha")
    application_id = started(world, restartPolicy=ON_FAILURE_ONCE)
    mark_launched_on(world.services.store, application_id, "elsewhere.invalid")
    one_store.launcher.exit(-1, 1)  # what a process on this host would say: ignored

    world.tick(HEARTBEAT_TIMEOUT - 1)
    world.report(application_id, {"type": "heartbeat"})
    world.tick(HEARTBEAT_TIMEOUT - 1)
    assert world.app(application_id).state is AppState.RUNNING, "it still reports"
    assert len(one_store.launcher.drivers) == 1

    world.tick(2)
    app = world.app(application_id)
    assert app.state is AppState.PENDING_RERUN
    lost = [
        event.message
        for event in world.services.applications.events(application_id, actor=ALICE)
        if event.kind == "driver-exited"
    ]
    assert lost == [
        f"attempt 1: the driver started on host elsewhere.invalid has not reported for "
        f"{HEARTBEAT_TIMEOUT} s, and its process cannot be seen from this host: taken as lost "
        "with its host (exit unknown)"
    ]
    world.tick(5)
    assert len(one_store.launcher.drivers) == 2, "the restart starts on this host"
    assert "abort" not in one_store.launcher.drivers[0].calls


def test_a_second_supervising_server_on_one_sqlite_store_is_refused(tmp_path: Path) -> None:
    servers = Servers(f"sqlite:///{tmp_path / 'store' / 'streamjobs.db'}", tmp_path / "home")
    try:
        servers.world("alpha")
        with pytest.raises(SupervisorRefused) as refused:
            servers.world("beta")
        detail = refused.value.detail
        assert "runs the supervisor of the SQLite store" in detail
        assert "at http://alpha.example:8040, named alpha" in detail
        assert "SQLite is single-server" in detail
        assert "STREAMJOBS_DATABASE_URL" in detail
        assert "STREAMJOBS_SUPERVISOR=false" in detail

        servers.built.pop("alpha").close()  # it stops: the lock is free
        beta = servers.world("beta")
        beta.tick()
        assert servers.leadership("beta").role() == "leader"
    finally:
        servers.close()


def test_a_lease_of_no_length_is_refused(one_store: Servers) -> None:
    world = one_store.world("alpha")
    with pytest.raises(ValueError, match="lease_seconds must be positive, not 0"):
        Leadership(
            store=world.services.store,
            clock=one_store.clock,
            server_name="gamma",
            server_url="http://gamma.example:8040",
            lease_seconds=0,
        )
