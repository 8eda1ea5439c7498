"""The supervisor as the server runs it: built from the services and the settings."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from streamjobs.launch.spark_ui import read_executors
from streamjobs.services.container import Services
from streamjobs.services.home_permissions import sqlite_file
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.executors import ExecutorReader
from streamjobs.supervisor.leadership import Leadership, Leading
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from streamjobs.supervisor.single_server import SupervisorFileLock


def supervisor_for(
    services: Services,
    *,
    executor_reader: ExecutorReader = read_executors,
    tick_timer: Callable[[], AbstractContextManager[object]] = nullcontext,
    leadership: Leading | None = None,
) -> Supervisor:
    """The supervisor over ``services``, timed by their settings, leading while it holds the
    supervisor's lease (``leadership_for``); ``executor_reader`` asks a driver's Spark REST API
    for its executors (tests over fake drivers give one that never answers); ``tick_timer``
    measures each tick; ``leadership`` is the server's own (default: one made here)."""
    settings = services.settings
    return Supervisor(
        store=services.store,
        launchers=services.launchers,
        attempts=AttemptFactory(
            store=services.store,
            apps_directory=settings.apps_directory,
            public_url=settings.resolved_public_url,
            secrets=services.secrets,
            places=services.jobs.places,
        ),
        clock=services.clock,
        config=SupervisorConfig(
            timing=Timing(
                heartbeat_timeout=settings.heartbeat_timeout_seconds,
                stop_timeout=settings.stop_timeout_seconds,
                abort_grace=settings.abort_grace_seconds,
                restart_lead=settings.restart_lead_seconds,
                standby_retry=settings.standby_retry_seconds,
            ),
            interval_seconds=settings.supervisor_interval_seconds,
        ),
        executor_reader=executor_reader,
        jar_resolver=services.jars,
        snapshots=services.snapshots,
        upgrades=services.upgrades,
        tick_timer=tick_timer,
        leadership=leadership or leadership_for(services),
    )


def leadership_for(services: Services) -> Leadership:
    """This server's part in choosing the supervisor, named and reached as the settings say;
    on a SQLite store, held by the store's file lock (``supervisor.single_server``)."""
    settings = services.settings
    database = sqlite_file(settings.resolved_database_url)
    file_lock = (
        None
        if database is None
        else SupervisorFileLock(
            database,
            describe=f"pid {os.getpid()} at {settings.resolved_public_url}, "
            f"named {settings.resolved_server_name}",
        )
    )
    return Leadership(
        store=services.store,
        clock=services.clock,
        server_name=settings.resolved_server_name,
        server_url=settings.resolved_public_url,
        lease_seconds=settings.lease_seconds,
        file_lock=file_lock,
    )
