"""The supervisor as the server runs it: built from the services and the settings."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from streamjobs.launch.spark_ui import read_executors
from streamjobs.services.container import Services
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.executors import ExecutorReader
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing


def supervisor_for(
    services: Services,
    *,
    executor_reader: ExecutorReader = read_executors,
    tick_timer: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> Supervisor:
    """The supervisor over ``services``, timed by their settings; ``executor_reader`` asks a
    driver's Spark REST API for its executors (tests over fake drivers give one that never
    answers); ``tick_timer`` measures each tick."""
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
            ),
            interval_seconds=settings.supervisor_interval_seconds,
        ),
        executor_reader=executor_reader,
        jar_resolver=services.jars,
        snapshots=services.snapshots,
        upgrades=services.upgrades,
        tick_timer=tick_timer,
    )
