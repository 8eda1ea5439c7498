"""Wires the store, the launchers, the services and the supervisor together from the settings,
once per server process."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from streamjobs.domain.clock import Clock, SystemClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.base import Launcher
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.standalone import StandaloneLauncher
from streamjobs.services.application_logs import ApplicationLogs
from streamjobs.services.applications import ApplicationService
from streamjobs.services.audit_log import AuditLogService
from streamjobs.services.bundles import BundleService
from streamjobs.services.connections import ConnectionService
from streamjobs.services.identity import IdentityService
from streamjobs.services.jobs import JobService
from streamjobs.services.people import PeopleService
from streamjobs.services.reports import ReportService
from streamjobs.services.secret_box import SecretBox, load_keys, read_key_file
from streamjobs.services.secrets import SecretService
from streamjobs.settings import Settings
from streamjobs.store.db import Store, create_engine_for, migrate

SECRET_PREFIX = "STREAMJOBS_SECRET_"
"""Server variables no driver inherits: the secret key, and any other ``STREAMJOBS_SECRET_*``."""


@dataclass(frozen=True)
class Services:
    """Every service the API, the web UI and the server commands call."""

    clock: Clock
    store: Store
    settings: Settings
    launchers: Mapping[Deployment, Launcher]
    jobs: JobService
    connections: ConnectionService
    identity: IdentityService
    applications: ApplicationService
    reports: ReportService
    logs: ApplicationLogs
    secrets: SecretService
    people: PeopleService
    bundles: BundleService
    audit: AuditLogService


def open_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    launchers: Mapping[Deployment, Launcher] | None = None,
) -> Services:
    """Open (and migrate) the store named by the settings and build the services over it."""
    clock = clock or SystemClock()
    settings.resolved_home.mkdir(parents=True, exist_ok=True)
    box = secret_box_for(settings)
    engine = create_engine_for(settings.resolved_database_url)
    migrate(engine)
    store = Store(engine)
    launchers = launchers if launchers is not None else launchers_for(settings)
    checkpoint_root = settings.resolved_checkpoint_root
    identity = IdentityService(store=store, clock=clock)
    return Services(
        clock=clock,
        store=store,
        settings=settings,
        launchers=launchers,
        jobs=JobService(store=store, clock=clock, checkpoint_root=checkpoint_root),
        connections=ConnectionService(store=store, clock=clock),
        identity=identity,
        applications=ApplicationService(store=store, clock=clock, checkpoint_root=checkpoint_root),
        reports=ReportService(store=store, clock=clock, keep_last=settings.progress_kept),
        logs=ApplicationLogs(store=store, launchers=launchers),
        secrets=SecretService(store=store, clock=clock, box=box),
        people=PeopleService(store=store, clock=clock, identity=identity),
        bundles=BundleService(store=store, clock=clock),
        audit=AuditLogService(store=store),
    )


def secret_box_for(settings: Settings) -> SecretBox:
    """The box of the configured keys; one of a key file reads it again when a secret does not
    open, for a key rotated while the server runs."""
    if settings.secret_key is not None:
        return SecretBox(
            load_keys(
                configured=settings.secret_key.get_secret_value(), key_file=settings.secret_key_file
            )
        )
    key_file = settings.secret_key_file
    keys = load_keys(configured=None, key_file=key_file)
    return SecretBox(keys, reload=lambda: read_key_file(key_file))


def launchers_for(settings: Settings) -> dict[Deployment, Launcher]:
    """The real launchers: local Spark always, a standalone cluster when one is configured.

    Drivers start from the server's environment less its secrets: each driver is given only the
    secrets its own job names.
    """
    environment = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIX)}
    launchers: dict[Deployment, Launcher] = {
        Deployment.SINGLE_NODE: LocalLauncher(environment=environment)
    }
    if settings.spark_master:
        launchers[Deployment.STANDARD] = StandaloneLauncher(
            master_url=settings.spark_master,
            worker_dirs=settings.spark_worker_dirs,
            environment=environment,
        )
    return launchers
