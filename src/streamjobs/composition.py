"""The one place a streamjobs server is put together: its store and services, its supervisor and
its HTTP application. ``streamjobs server``, the tests' servers and the bench all build it here,
so what they run is what the server runs.

Building opens the store and checks it first (``services.container.open_services``): a store
that cannot be served stops the build with ``StoreUnusable`` before anything answers. A server
that would supervise a SQLite store another server supervises already stops the build with
``SupervisorRefused`` (``supervisor.single_server``); on PostgreSQL it waits as a standby
(``supervisor.leadership``).
"""

from __future__ import annotations

import gc
import logging.config
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from streamjobs.api.metrics import MetricsPort, ServerMetrics
from streamjobs.console_log import server_log_config
from streamjobs.domain.clock import Clock
from streamjobs.domain.manifest import Deployment
from streamjobs.http.server_role import Supervision, WithoutSupervisor
from streamjobs.launch.base import Launcher
from streamjobs.launch.spark_ui import read_executors
from streamjobs.notify.worker import DeliveryTerms, DeliveryWorker
from streamjobs.server_app import create_app
from streamjobs.services.container import Services, open_services
from streamjobs.services.metrics_reading import MetricsReader
from streamjobs.settings import Settings
from streamjobs.supervisor.executors import ExecutorReader
from streamjobs.supervisor.loop import Supervisor
from streamjobs.supervisor.nudge import AsgiApp, nudging
from streamjobs.supervisor.server import leadership_for, supervisor_for


@dataclass(frozen=True)
class Server:
    """A built server: nothing runs until ``serve`` (or a test ticks the supervisor itself)."""

    services: Services
    supervisor: Supervisor | None
    app: FastAPI
    metrics: ServerMetrics
    delivery: DeliveryWorker | None = None
    """Sends the notification outbox while the server serves (its own thread)."""

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def asgi(self) -> AsgiApp:
        """What answers HTTP: the app, waking the supervisor after the requests that concern it."""
        if self.supervisor is None:
            return self.app
        return nudging(self.app, self.supervisor)

    def serve(self) -> None:
        """Start the supervisor and answer HTTP on the settings' host and port until stopped."""
        import uvicorn

        log_config = server_log_config()
        logging.config.dictConfig(log_config)  # before the supervisor's first decisions
        if self.supervisor is not None:
            self.supervisor.start()
        if self.delivery is not None:
            self.delivery.start()
        metrics_port = self.open_metrics_port()
        # What start-up made (modules, the app and its routes, compiled statements: most of the
        # heap) lives as long as the server: kept out of the collector's sight, a full
        # collection scans only what requests made, ~5 ms instead of ~80 ms: under load those
        # pauses were the slowest requests' wait (bench figure 4).
        gc.freeze()
        try:
            uvicorn.run(
                self.asgi,
                host=self.settings.host,
                port=self.settings.port,
                log_config=log_config,
                **uvicorn_proxy_options(self.settings),
            )
        finally:
            if metrics_port is not None:
                metrics_port.close()
            if self.supervisor is not None:
                self.supervisor.stop()
            if self.delivery is not None:
                self.delivery.stop()

    def open_metrics_port(self) -> MetricsPort | None:
        """Serve the metrics open on ``metrics_port`` of the server's host, when that is set,
        until the port is closed."""
        port = self.settings.metrics_port
        if port is None:
            return None
        return MetricsPort(self.metrics, host=self.settings.host, port=port)

    def close(self) -> None:
        """Stop the supervisor if it runs and close the store's connections."""
        if self.supervisor is not None:
            self.supervisor.stop()
        if self.delivery is not None:
            self.delivery.stop()
        self.services.store.close()


def uvicorn_proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for forwarded headers: believed only from the trusted proxies (uvicorn
    itself would believe them from 127.0.0.1, so that any local process could claim to be
    anyone and escape the sign-in limits of its own address)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}


def build_server(
    settings: Settings,
    *,
    clock: Clock | None = None,
    launchers: Mapping[Deployment, Launcher] | None = None,
    supervise: bool | None = None,
    executor_reader: ExecutorReader = read_executors,
) -> Server:
    """The server the settings describe, its store checked and migrated.

    ``clock`` and ``launchers`` replace the real ones (tests, the bench); ``supervise`` (default:
    the settings') says whether it has a supervisor; ``executor_reader`` is the supervisor's way
    to a driver's Spark REST API.
    """
    services = open_services(settings, clock=clock, launchers=launchers)
    try:
        return server_over(services, supervise=supervise, executor_reader=executor_reader)
    except BaseException:
        services.store.close()
        raise


def server_over(
    services: Services,
    *,
    supervise: bool | None = None,
    executor_reader: ExecutorReader = read_executors,
) -> Server:
    """A server over services already open (see ``build_server``)."""
    if supervise is None:
        supervise = services.settings.supervisor
    metrics = ServerMetrics(MetricsReader(store=services.store, clock=services.clock))
    supervisor: Supervisor | None = None
    supervision: Supervision = WithoutSupervisor(
        services.store, services.settings.resolved_server_name
    )
    if supervise:
        leadership = leadership_for(services)
        leadership.claim_file_lock()  # SQLite: refused here when another server supervises
        supervisor = supervisor_for(
            services,
            executor_reader=executor_reader,
            tick_timer=metrics.tick_duration.time,
            leadership=leadership,
        )
        supervision = leadership
    app = create_app(services=services, server_metrics=metrics)
    app.state.supervision = supervision
    return Server(
        services=services,
        supervisor=supervisor,
        app=app,
        metrics=metrics,
        delivery=delivery_worker_for(services) if services.settings.delivery else None,
    )


def delivery_worker_for(services: Services) -> DeliveryWorker:
    """The worker that sends the outbox with the settings' pacing, retries and timeout."""
    settings = services.settings
    return DeliveryWorker(
        store=services.store,
        clock=services.clock,
        secrets=services.secrets,
        public_url=settings.resolved_public_url,
        terms=DeliveryTerms.from_settings(settings),
    )
