"""Wires the store, the launchers, the services and the supervisor together from the settings,
once per server process."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.clock import Clock, SystemClock
from streamjobs.domain.locations import local_path
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.base import Launcher
from streamjobs.launch.command import Toolchain
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from streamjobs.launch.standalone import StandaloneLauncher
from streamjobs.services.application_logs import ApplicationLogs
from streamjobs.services.applications import ApplicationService
from streamjobs.services.audit_log import AuditLogService
from streamjobs.services.bundles import BundleService, seed_default_data_roots
from streamjobs.services.connections import ConnectionService
from streamjobs.services.home_permissions import secure_home
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
    secure_home(settings)
    box = secret_box_for(settings)
    engine = create_engine_for(settings.resolved_database_url)
    migrate(engine)
    store = Store(engine)
    launchers = launchers if launchers is not None else launchers_for(settings)
    checkpoint_root = settings.resolved_checkpoint_root
    identity = IdentityService(store=store, clock=clock)
    protected_roots = server_places(settings)
    seed_default_data_roots(store, default_data_roots_of(settings), protected_roots=protected_roots)
    return Services(
        clock=clock,
        store=store,
        settings=settings,
        launchers=launchers,
        jobs=JobService(
            store=store,
            clock=clock,
            checkpoint_root=checkpoint_root,
            protected_roots=protected_roots,
        ),
        connections=ConnectionService(store=store, clock=clock),
        identity=identity,
        applications=ApplicationService(store=store, clock=clock, checkpoint_root=checkpoint_root),
        reports=ReportService(store=store, clock=clock, keep_last=settings.progress_kept),
        logs=ApplicationLogs(store=store, launchers=launchers),
        secrets=SecretService(store=store, clock=clock, box=box),
        people=PeopleService(store=store, clock=clock, identity=identity),
        bundles=BundleService(store=store, clock=clock, protected_roots=protected_roots),
        audit=AuditLogService(store=store),
    )


def default_data_roots_of(settings: Settings) -> list[str]:
    """What the ``default`` bundle is given as data roots on the first start: the configured
    defaults. Never the checkpoint root: derived checkpoints are each their own job's, and a root
    holding them all would let one job reach every other's."""
    return list(settings.default_data_roots)


def server_places(settings: Settings) -> list[str]:
    """The server's own directories, which no job may name and no data root may hold: its home,
    the root of derived checkpoints (when set apart from the home) and the identities' homes."""
    places = [settings.resolved_home.as_uri(), settings.resolved_identity_homes.as_uri()]
    if settings.checkpoint_root:
        places.append(settings.resolved_checkpoint_root)
    return places


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

    Drivers take a few variables of the server's environment (never its secrets, see
    ``launch.command.INHERITED_VARIABLES``) and each is given only the secrets its own job names.
    Every driver runs in its sandbox unless the settings turn isolation off.
    """
    environment = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIX)}
    toolchain = Toolchain.installed()
    sandbox = (
        BubblewrapSandbox(
            hidden=_local_paths(server_places(settings)),
            identity_homes=settings.resolved_identity_homes,
            toolchain=toolchain,
        )
        if settings.isolation
        else None
    )
    launchers: dict[Deployment, Launcher] = {
        Deployment.SINGLE_NODE: LocalLauncher(
            toolchain=toolchain, environment=environment, sandbox=sandbox
        )
    }
    if settings.spark_master:
        launchers[Deployment.STANDARD] = StandaloneLauncher(
            master_url=settings.spark_master,
            worker_dirs=settings.spark_worker_dirs,
            toolchain=toolchain,
            environment=environment,
            sandbox=sandbox,
        )
    return launchers


def _local_paths(locations: list[str]) -> list[Path]:
    return [Path(path) for location in locations if (path := local_path(location)) is not None]
