"""Wires the store, the launchers and the services together from the settings, once per server
process (``streamjobs.composition`` adds the supervisor and the app).

Opening checks the store before anything is migrated or served (``store.preflight``), and that
the key its sealed secrets need is there: each problem stops the start with ``StoreUnusable``.
A standalone cluster on other hosts that could not reach the server or its drivers stops it
too (``ClusterSettingsUnusable``, naming the setting to set).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TypeVar

from streamjobs.domain.clock import Clock, SystemClock
from streamjobs.domain.cluster_addresses import cluster_address_problems, refuse_cluster_problems
from streamjobs.domain.errors import StoreUnusable
from streamjobs.domain.locations import local_path
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.base import Launcher
from streamjobs.launch.command import Toolchain
from streamjobs.launch.driver_addresses import driver_addresses
from streamjobs.launch.jars import JarResolver, SparkJarResolver, known_failure
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from streamjobs.launch.standalone import StandaloneLauncher
from streamjobs.launch.tool_runs import SparkSubmitToolRunner
from streamjobs.launch.tool_sandbox import ToolSandbox
from streamjobs.services.application_logs import ApplicationLogs
from streamjobs.services.applications import ApplicationService
from streamjobs.services.audit_log import AuditLogService
from streamjobs.services.bundles import BundleService, seed_default_data_roots
from streamjobs.services.compatibility import CompatibilityCheck
from streamjobs.services.connections import ConnectionService
from streamjobs.services.destinations import DEFAULT_TEST_TIMEOUT_SECONDS, DestinationService
from streamjobs.services.home_permissions import secure_home, sqlite_file
from streamjobs.services.identity import IdentityService
from streamjobs.services.jobs import JobService
from streamjobs.services.passwords import Passwords
from streamjobs.services.people import PeopleService
from streamjobs.services.reports import ReportService
from streamjobs.services.secret_box import SecretBox, load_keys, read_key_file
from streamjobs.services.secrets import SecretService
from streamjobs.services.sign_in import SignInService, policies_of
from streamjobs.services.snapshots import SnapshotService
from streamjobs.services.state_view import StateView
from streamjobs.services.upgrades import UpgradeService
from streamjobs.services.web_sessions import SessionService
from streamjobs.settings import Settings
from streamjobs.store.db import Store, create_engine_for, migrate
from streamjobs.store.outages import translated_outages
from streamjobs.store.preflight import check_store, check_store_file, holds_sealed_secrets

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
    sign_in: SignInService
    sessions: SessionService
    destinations: DestinationService
    """Notification destinations (Settings -> Notifications): manage, test, deliveries."""
    snapshots: SnapshotService
    """Snapshots of jobs' checkpoints: taken, listed, deleted, restored at a Run."""
    jars: JarResolver | None = None
    """Resolves the jars jobs need before their drivers start (None: over fake launchers)."""
    state_view: StateView | None = None
    """A look inside pipelines' state (the ``state`` tool); None: this server reads none."""
    compatibility: CompatibilityCheck | None = None
    """Whether a job's new spec fits its running application's checkpoint (the ``dry-run``
    tool); None: this server checks none."""
    upgrades: UpgradeService | None = None
    """Upgrades of running applications to their job's current spec; None: this server makes
    none."""


def open_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    launchers: Mapping[Deployment, Launcher] | None = None,
) -> Services:
    """Check and migrate the store named by the settings and build the services over it.

    With the real launchers (``launchers`` None), settings that would leave a standalone
    cluster on other hosts unable to reach the server or its drivers stop it first
    (``ClusterSettingsUnusable``), before the store is touched."""
    clock = clock or SystemClock()
    if launchers is None:
        refuse_cluster_problems(cluster_problems_of(settings))
    database_file = sqlite_file(settings.resolved_database_url)
    if database_file is not None:
        check_store_file(database_file)  # before secure_home creates it empty
    with _home_written(settings):
        secure_home(settings)
    store = open_store(settings)
    try:
        check_secret_key(settings, store)
        with _home_written(settings):
            box = secret_box_for(settings)
    except BaseException:
        store.close()
        raise
    jars = jar_resolver_for(settings) if launchers is None else None
    launchers = launchers if launchers is not None else launchers_for(settings)
    checkpoint_root = settings.resolved_checkpoint_root
    passwords = Passwords(settings.parsed_password_cost)
    identity = IdentityService(store=store, clock=clock, passwords=passwords)
    protected_roots = server_places(settings)
    seed_default_data_roots(store, default_data_roots_of(settings), protected_roots=protected_roots)
    secret_service = SecretService(store=store, clock=clock, box=box)
    snapshots = SnapshotService(
        store=store,
        clock=clock,
        snapshot_root=settings.resolved_snapshot_root,
        apps_directory=settings.apps_directory,
        checkpoint_root=checkpoint_root,
    )
    jobs = JobService(
        store=store,
        clock=clock,
        checkpoint_root=checkpoint_root,
        protected_roots=protected_roots,
        abort_wait_seconds=settings.delete_abort_wait_seconds,
        snapshot_root=settings.resolved_snapshot_root,
    )
    applications = ApplicationService(
        store=store,
        clock=clock,
        checkpoint_root=checkpoint_root,
        jar_failures=partial(known_failure, jars) if jars is not None else None,
        deployments=frozenset(launchers),
        snapshots=snapshots,
        cluster_problems=cluster_problems_of(settings),
    )
    tools = tool_runner_for(settings)
    compatibility = CompatibilityCheck(
        store=store,
        clock=clock,
        tools=tools,
        checkpoint_root=checkpoint_root,
        work_directory=settings.resolved_home / "tools",
        secrets=secret_service,
    )
    return Services(
        clock=clock,
        store=store,
        settings=settings,
        launchers=launchers,
        jobs=jobs,
        connections=ConnectionService(store=store, clock=clock),
        identity=identity,
        applications=applications,
        reports=ReportService(store=store, clock=clock, keep_last=settings.progress_kept),
        logs=ApplicationLogs(store=store, launchers=launchers),
        secrets=secret_service,
        people=PeopleService(store=store, clock=clock, identity=identity),
        bundles=BundleService(store=store, clock=clock, protected_roots=protected_roots),
        audit=AuditLogService(store=store),
        sign_in=sign_in_service(settings, store, clock, passwords),
        sessions=SessionService(
            store=store,
            clock=clock,
            lifetime=timedelta(seconds=settings.session_lifetime_seconds),
            idle_timeout=timedelta(seconds=settings.session_idle_timeout_seconds),
        ),
        destinations=DestinationService(
            store=store,
            clock=clock,
            secrets=secret_service,
            test_timeout_seconds=min(
                settings.delivery_send_timeout_seconds, DEFAULT_TEST_TIMEOUT_SECONDS
            ),
        ),
        snapshots=snapshots,
        jars=jars,
        state_view=StateView(
            store=store,
            clock=clock,
            tools=tools,
            work_root=settings.resolved_home / "tools",
            jars=jars,
        ),
        compatibility=compatibility,
        upgrades=UpgradeService(
            store=store,
            clock=clock,
            checkpoint_root=checkpoint_root,
            starter=applications,
            places=jobs.places,
            compatibility=compatibility,
        ),
    )


def jar_resolver_for(settings: Settings) -> SparkJarResolver:
    """The resolver of jobs' jars into the Maven repository and Ivy directory of the settings."""
    return SparkJarResolver.installed(
        maven_repository=settings.maven_repository, ivy_directory=settings.ivy_directory
    )


def sign_in_service(
    settings: Settings, store: Store, clock: Clock, passwords: Passwords
) -> SignInService:
    account_policy, address_policy = policies_of(settings)
    return SignInService(
        store=store,
        clock=clock,
        account_policy=account_policy,
        address_policy=address_policy,
        passwords=passwords,
    )


def open_store(settings: Settings) -> Store:
    """The store the settings name, checked (``StoreUnusable``) and migrated."""
    engine = create_engine_for(
        settings.resolved_database_url, busy_timeout_seconds=settings.sqlite_busy_timeout_seconds
    )
    try:
        check_store(engine)
        with translated_outages():
            migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)


def check_secret_key(settings: Settings, store: Store) -> None:
    """Refuse to start (``StoreUnusable``) when the store holds sealed secrets and the key file
    is gone: a new key, made as on a first start, would open none of them."""
    if settings.secret_key is not None or settings.secret_key_file.exists():
        return
    if holds_sealed_secrets(store.engine):
        raise StoreUnusable(
            f"the store holds sealed secrets, but the key file {settings.secret_key_file} that "
            "opens them is missing: restore it from your backup of the home (or set "
            "STREAMJOBS_SECRET_KEY to its key). If the key is lost, set STREAMJOBS_SECRET_KEY to "
            "a new key and put every secret again"
        )


@contextmanager
def _home_written(settings: Settings) -> Iterator[None]:
    """Writing the home failed (a full disk, a read-only file system): say so, and where."""
    try:
        yield
    except OSError as error:
        where = error.filename or settings.resolved_home
        raise StoreUnusable(
            f"cannot write {where} in the server's home: {error.strerror or error}"
        ) from error


def default_data_roots_of(settings: Settings) -> list[str]:
    """What the ``default`` bundle is given as data roots on the first start: the configured
    defaults. Never the checkpoint root: derived checkpoints are each their own job's, and a root
    holding them all would let one job reach every other's."""
    return list(settings.default_data_roots)


def server_places(settings: Settings) -> list[str]:
    """The server's own directories, which no job may name and no data root may hold: its home,
    the root of derived checkpoints and the snapshot root (each when set apart from the home)
    and the identities' homes."""
    places = [settings.resolved_home.as_uri(), settings.resolved_identity_homes.as_uri()]
    if settings.checkpoint_root:
        places.append(settings.resolved_checkpoint_root)
    if settings.snapshot_root is not None:
        places.append(settings.resolved_snapshot_root.as_uri())
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
    environment = _inherited_environment()
    toolchain = Toolchain.installed(
        settings.maven_repository.expanduser(), driver_java_options=settings.driver_java_options
    )
    sandbox = _sandbox(BubblewrapSandbox, settings, toolchain)
    launchers: dict[Deployment, Launcher] = {
        Deployment.SINGLE_NODE: LocalLauncher(
            toolchain=toolchain, environment=environment, sandbox=sandbox
        )
    }
    if settings.spark_master:
        addresses = driver_addresses(
            settings.spark_master,
            driver_host=settings.driver_host,
            bind_address=settings.driver_bind_address,
        )
        launchers[Deployment.STANDARD] = StandaloneLauncher(
            master_url=settings.spark_master,
            worker_dirs=settings.spark_worker_dirs,
            rest_url=settings.spark_master_rest_url,
            master_web_url=settings.spark_master_web_url,
            toolchain=toolchain,
            environment=environment,
            sandbox=sandbox,
            driver_addresses=addresses,
        )
    return launchers


def cluster_problems_of(settings: Settings) -> list[str]:
    """What keeps the settings' standalone cluster, on other hosts, from reaching this server
    and its drivers (``domain.cluster_addresses``): the server does not start with any, and Run
    refuses standard jobs while one holds."""
    return cluster_address_problems(
        master_url=settings.spark_master,
        public_url=settings.resolved_public_url,
        public_url_set=settings.public_url is not None,
        driver_host=settings.driver_host,
        driver_bind_address=settings.driver_bind_address,
    )


def tool_runner_for(settings: Settings) -> SparkSubmitToolRunner:
    """Runs the short Spark tools (``launch.tool_runs``) under the drivers' rules: the same
    inherited variables, each in its sandbox unless the settings turn isolation off."""
    environment = _inherited_environment()
    toolchain = Toolchain.installed(
        settings.maven_repository.expanduser(), driver_java_options=settings.driver_java_options
    )
    sandbox = _sandbox(ToolSandbox, settings, toolchain)
    return SparkSubmitToolRunner(toolchain=toolchain, environment=environment, sandbox=sandbox)


def _inherited_environment() -> dict[str, str]:
    """The server's environment without its secrets (``SECRET_PREFIX``)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIX)}


_Sandbox = TypeVar("_Sandbox", BubblewrapSandbox, ToolSandbox)


def _sandbox(kind: type[_Sandbox], settings: Settings, toolchain: Toolchain) -> _Sandbox | None:
    """A ``kind`` sandbox hiding the server's local places; None when isolation is off."""
    if not settings.isolation:
        return None
    return kind(
        hidden=_local_paths(server_places(settings)),
        identity_homes=settings.resolved_identity_homes,
        toolchain=toolchain,
    )


def _local_paths(locations: list[str]) -> list[Path]:
    return [Path(path) for location in locations if (path := local_path(location)) is not None]
