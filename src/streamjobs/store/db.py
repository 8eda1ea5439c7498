"""Opening the store: engines for SQLite and PostgreSQL, migrations, and transactions.

Everything that writes the store goes through ``Store.transaction()``: it hands out
repositories bound to one session, and either all their writes land or none do. What only reads
may go through ``Store.reading()`` instead, which on PostgreSQL saves the BEGIN and COMMIT round
trips.

SQLite runs in WAL mode, so readers never wait; a transaction begins at its first write (the
standard ``sqlite3`` behaviour) and writers wait for each other up to the busy timeout. Like
PostgreSQL's default READ COMMITTED, each read sees the latest committed data; lost updates are
prevented by the version checks in the repositories, not by the isolation level.

Both raise ``StoreUnavailable`` for a full disk, a locked or read-only database, a database
server out of reach, no pooled connection free in time or a statement cancelled, and
``StoreContention`` for a transaction PostgreSQL rolled back to break a deadlock or a
serialization failure (``store.outages``), never the driver's own exception.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.orm import Session, sessionmaker

from streamjobs.store.access import GrantRepository, GroupRepository
from streamjobs.store.application_metrics import ApplicationMetricsRepository
from streamjobs.store.applications import ApplicationRepository
from streamjobs.store.audit import AuditRepository
from streamjobs.store.catalog import BundleRepository, NodeTypeRepository
from streamjobs.store.connections import ConnectionRepository
from streamjobs.store.destinations import DestinationRepository
from streamjobs.store.health_states import HealthStateRepository
from streamjobs.store.identity import TokenRepository, UserRepository
from streamjobs.store.job_claims import ClaimRepository
from streamjobs.store.jobs import JobRepository
from streamjobs.store.leases import (
    SUPERVISOR_LEASE,
    Fence,
    LeaseRepository,
    check_fence,
    current_fence,
)
from streamjobs.store.notifications import NotificationRepository
from streamjobs.store.outages import replace_connections_after_outages, translated_outages
from streamjobs.store.secrets import SecretRepository
from streamjobs.store.sign_in_throttles import SignInThrottleRepository
from streamjobs.store.snapshots import SnapshotRepository
from streamjobs.store.upgrades import UpgradeRepository
from streamjobs.store.web_sessions import WebSessionRepository

MIGRATIONS_DIRECTORY = Path(__file__).with_name("migrations")
migration_log = logging.getLogger("streamjobs.store.migrations")
"""Says which revision a migration brings the store to; the server's commands show it."""

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
)
"""Run on every new SQLite connection: foreign keys and the busy timeout are per connection."""
SQLITE_BUSY_TIMEOUT_SECONDS = 5.0
"""How long a SQLite write waits for another's lock before it fails (``StoreUnavailable``)."""

# Both engines decode JSON columns with orjson: lists read many manifests, and the standard
# library's decoder was most of their time.

SQLITE_DRIVERS = frozenset({"sqlite", "sqlite+pysqlite"})
POSTGRESQL_DRIVERS = frozenset({"postgresql", "postgresql+psycopg"})

MIGRATION_LOCK_ID = 0x5354524A
"""PostgreSQL advisory lock key ("STRJ") held while migrating, so servers migrate one at a time."""


def create_engine_for(
    url: str | URL,
    *,
    read_only: bool = False,
    busy_timeout_seconds: float = SQLITE_BUSY_TIMEOUT_SECONDS,
) -> Engine:
    """An engine for a ``sqlite:///PATH`` or ``postgresql://…`` URL (driven by psycopg 3).

    With ``read_only`` (PostgreSQL only), its connections autocommit each statement and the
    database refuses any write made through them. ``busy_timeout_seconds`` (SQLite only) is
    how long a write waits for another's lock. Raises ValueError for any other kind of database.
    """
    parsed = make_url(url)
    if parsed.drivername in SQLITE_DRIVERS:
        engine = _sqlite_engine(parsed, busy_timeout_seconds)
        replace_connections_after_outages(engine)
        return engine
    if parsed.drivername in POSTGRESQL_DRIVERS:
        # timestamps come back in the session's time zone: UTC makes them UtcDateTime's
        # already, with nothing to convert
        options = "-c TimeZone=UTC"
        reading: dict[str, Any] = {}
        if read_only:
            options += " -c default_transaction_read_only=on"
            reading["isolation_level"] = "AUTOCOMMIT"
        engine = create_engine(
            parsed.set(drivername="postgresql+psycopg"),
            pool_pre_ping=True,
            json_deserializer=orjson.loads,
            connect_args={"options": options},
            **reading,
        )
        if not read_only:
            replace_connections_after_outages(engine)
        return engine
    raise ValueError(
        f"unsupported database URL scheme {parsed.drivername!r}: "
        "use sqlite:///PATH or postgresql://USER@HOST/DATABASE"
    )


def _sqlite_engine(url: URL, busy_timeout_seconds: float) -> Engine:
    if url.database and url.database != ":memory:":
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, json_deserializer=orjson.loads)
    pragmas = (*SQLITE_PRAGMAS, f"PRAGMA busy_timeout={round(busy_timeout_seconds * 1000)}")

    def configure(dbapi_connection: Any, _connection_record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            for pragma in pragmas:
                cursor.execute(pragma)
        finally:
            cursor.close()

    event.listen(engine, "connect", configure)
    return engine


def migrate(engine: Engine) -> None:
    """Bring the database's schema up to the newest migration; a no-op when it is there already.

    The whole upgrade is one transaction (SQLite included), and concurrent callers take turns.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY).replace("%", "%%"))
    with engine.begin() as connection:
        _lock_for_migration(connection)
        current = MigrationContext.configure(connection).get_current_revision()
        head = ScriptDirectory.from_config(config).get_current_head()
        if current != head:
            migration_log.info(
                "migrating store %s from revision %s to revision %s",
                engine.url.render_as_string(hide_password=True),
                current or "none (a new store)",
                head,
            )
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _lock_for_migration(connection: Connection) -> None:
    """Start the migration's transaction holding a lock no other migration can hold."""
    if connection.dialect.name == "sqlite":
        # sqlite3 begins no transaction before DDL; BEGIN IMMEDIATE also takes the write lock
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})")


@dataclass(frozen=True)
class Repositories:
    """The repositories of one transaction, all working in the same session."""

    jobs: JobRepository
    applications: ApplicationRepository
    connections: ConnectionRepository
    users: UserRepository
    tokens: TokenRepository
    node_types: NodeTypeRepository
    bundles: BundleRepository
    audit: AuditRepository
    secrets: SecretRepository
    groups: GroupRepository
    grants: GrantRepository
    claims: ClaimRepository
    web_sessions: WebSessionRepository
    sign_in_throttles: SignInThrottleRepository
    application_metrics: ApplicationMetricsRepository
    destinations: DestinationRepository
    notifications: NotificationRepository
    health: HealthStateRepository
    snapshots: SnapshotRepository
    upgrades: UpgradeRepository
    leases: LeaseRepository

    @classmethod
    def bound_to(cls, session: Session) -> Repositories:
        """Repositories that all read and write through ``session``."""
        return cls(
            jobs=JobRepository(session),
            applications=ApplicationRepository(session),
            connections=ConnectionRepository(session),
            users=UserRepository(session),
            tokens=TokenRepository(session),
            node_types=NodeTypeRepository(session),
            bundles=BundleRepository(session),
            audit=AuditRepository(session),
            secrets=SecretRepository(session),
            groups=GroupRepository(session),
            grants=GrantRepository(session),
            claims=ClaimRepository(session),
            web_sessions=WebSessionRepository(session),
            sign_in_throttles=SignInThrottleRepository(session),
            application_metrics=ApplicationMetricsRepository(session),
            destinations=DestinationRepository(session),
            notifications=NotificationRepository(session),
            health=HealthStateRepository(session),
            snapshots=SnapshotRepository(session),
            upgrades=UpgradeRepository(session),
            leases=LeaseRepository(session),
        )


class Store:
    """The metadata store: one engine, and transactions over it. Safe to share between threads."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine)
        self._reading_engine = _reading_engine(engine)
        self._reading_sessions = sessionmaker(self._reading_engine)

    @classmethod
    def open(cls, url: str) -> Store:
        """The store at ``url``, migrated to the newest schema."""
        engine = create_engine_for(url)
        migrate(engine)
        return cls(engine)

    @contextmanager
    def transaction(self) -> Iterator[Repositories]:
        """Repositories for one transaction.

        The transaction commits when the block ends and rolls back (nothing written) when it raises.
        Inside ``fenced(token)`` (in the same thread or task) it first checks that the
        supervisor's lease still carries ``token``, and raises ``Fenced`` before anything is
        written when it does not (``store.leases``).
        """
        with translated_outages(), self._sessions.begin() as session:
            fence = current_fence.get()
            if fence is not None and fence.store is self:
                check_fence(session, fence)
            yield Repositories.bound_to(session)

    @contextmanager
    def fenced(
        self, token: int, *, hold_limit_seconds: float, lease: str = SUPERVISOR_LEASE
    ) -> Iterator[Fence]:
        """Make every ``transaction()`` opened in this block (by this thread, whichever code
        opens it) a write under ``lease``'s ``token``: refused with ``Fenced`` once the lease
        has passed to a newer token. ``hold_limit_seconds``: how long such a transaction may
        sit idle before PostgreSQL ends it (a paused process must not hold the lease's lock).
        The fence it yields says whether a write was refused (``refusal``)."""
        fence = Fence(self, token, hold_limit_seconds, lease)
        reset = current_fence.set(fence)
        try:
            yield fence
        finally:
            current_fence.reset(reset)

    @contextmanager
    def reading(self) -> Iterator[Repositories]:
        """Repositories for reads only.

        On PostgreSQL each statement runs on its own, on connections the database keeps from
        writing: a transaction's BEGIN and COMMIT would be two more round trips, and under READ
        COMMITTED each statement of a transaction sees the newest committed data anyway. On
        SQLite it is a transaction, as ``transaction()`` gives.
        """
        with translated_outages(reading=True), self._reading_sessions() as session:
            yield Repositories.bound_to(session)

    def close(self) -> None:
        """Close every pooled connection."""
        if self._reading_engine is not self.engine:
            self._reading_engine.dispose()
        self.engine.dispose()


def _reading_engine(engine: Engine) -> Engine:
    """The engine ``Store.reading()`` reads through: on PostgreSQL one of its own, read-only
    and autocommitting (an isolation level set per checkout costs the round trips it saves);
    on SQLite, ``engine``."""
    if engine.dialect.name != "postgresql":
        return engine
    return create_engine_for(engine.url, read_only=True)
