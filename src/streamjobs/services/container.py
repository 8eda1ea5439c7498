"""Wires the store and the services together from the settings, once per server process."""

from __future__ import annotations

from dataclasses import dataclass

from streamjobs.domain.clock import Clock, SystemClock
from streamjobs.services.connections import ConnectionService
from streamjobs.services.identity import IdentityService
from streamjobs.services.jobs import JobService
from streamjobs.settings import Settings
from streamjobs.store.db import Store, create_engine_for, migrate


@dataclass(frozen=True)
class Services:
    """Every service the API, the web UI and the server commands call."""

    clock: Clock
    store: Store
    jobs: JobService
    connections: ConnectionService
    identity: IdentityService


def open_services(settings: Settings, *, clock: Clock | None = None) -> Services:
    """Open (and migrate) the store named by the settings and build the services over it."""
    clock = clock or SystemClock()
    settings.resolved_home.mkdir(parents=True, exist_ok=True)
    engine = create_engine_for(settings.resolved_database_url)
    migrate(engine)
    store = Store(engine)
    return Services(
        clock=clock,
        store=store,
        jobs=JobService(
            store=store, clock=clock, checkpoint_root=settings.resolved_checkpoint_root
        ),
        connections=ConnectionService(store=store, clock=clock),
        identity=IdentityService(store=store, clock=clock),
    )
