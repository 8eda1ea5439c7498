"""The REST API's application: routes, authentication and the one error handler, over the
services. The server's application is this plus the web UI, put together above both
(``streamjobs.server_app``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request

from streamjobs import __version__
from streamjobs.api import (
    applications,
    audit,
    bundles,
    connections,
    destinations,
    jobs,
    metrics,
    people,
    secrets,
    snapshots,
    state,
    upgrades,
    user_sessions,
)
from streamjobs.api.auth import require_actor
from streamjobs.api.body_limits import BodyLimitMiddleware, BodyLimits
from streamjobs.api.conventions import with_manifest_schemas
from streamjobs.api.errors import install_error_handlers
from streamjobs.api.metrics import ServerMetrics
from streamjobs.api.request_metrics import RequestMetricsMiddleware
from streamjobs.domain.connections import connection_json_schema
from streamjobs.domain.destinations import destination_json_schema
from streamjobs.domain.spec import manifest_json_schema
from streamjobs.http.server_role import described, supervision_of
from streamjobs.services.container import Services
from streamjobs.services.metrics_reading import MetricsReader

meta = APIRouter(prefix="/api/v1", tags=["meta"], dependencies=[Depends(require_actor)])


@meta.get("/openapi.json", include_in_schema=False)
def openapi(request: Request) -> dict[str, Any]:
    document: dict[str, Any] = request.app.openapi()
    return document


@meta.get("/schema/streamingjob.json", summary="JSON Schema of the StreamingJob manifest")
def streamingjob_schema() -> dict[str, Any]:
    return manifest_json_schema()


@meta.get("/schema/connection.json", summary="JSON Schema of the Connection manifest")
def connection_schema() -> dict[str, Any]:
    return connection_json_schema()


@meta.get(
    "/schema/notificationdestination.json",
    summary="JSON Schema of the NotificationDestination manifest",
)
def destination_schema() -> dict[str, Any]:
    return destination_json_schema()


def create_api(*, services: Services, server_metrics: ServerMetrics | None = None) -> FastAPI:
    """The REST API's ASGI application over the given services (no web UI); its metrics go to
    ``server_metrics`` (default: a registry of its own)."""
    app = FastAPI(
        title="streamjobs",
        version=__version__,
        summary="Control plane for Spark Structured Streaming jobs",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        # FastAPI's OpenTelemetry bridge looks for configured providers on every request (about
        # 0.1 ms each), and the server configures none: it would never have anything to report.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.services = services
    app.state.metrics = server_metrics or ServerMetrics(
        MetricsReader(store=services.store, clock=services.clock)
    )
    install_error_handlers(app)
    plain_openapi = app.openapi

    def openapi_with_manifests() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = with_manifest_schemas(
                plain_openapi(),
                {
                    "StreamingJob": manifest_json_schema,
                    "Connection": connection_json_schema,
                    "NotificationDestination": destination_json_schema,
                },
            )
        return app.openapi_schema

    app.openapi = openapi_with_manifests  # type: ignore[method-assign]

    @app.get("/healthz", tags=["meta"], summary="Liveness: answers without authentication")
    def healthz(request: Request) -> dict[str, Any]:
        """Also says this server's name, whether it runs the supervisor (``role``: leader,
        standby or none) and which server does (``leader``: its name and URL, or null)."""
        return {"status": "ok", "version": __version__, **described(supervision_of(request))}

    app.include_router(meta)
    app.include_router(jobs.router, dependencies=[Depends(require_actor)])
    app.include_router(connections.router, dependencies=[Depends(require_actor)])
    app.include_router(destinations.router, dependencies=[Depends(require_actor)])
    app.include_router(secrets.router, dependencies=[Depends(require_actor)])
    app.include_router(applications.jobs_router, dependencies=[Depends(require_actor)])
    app.include_router(applications.router, dependencies=[Depends(require_actor)])
    app.include_router(snapshots.router, dependencies=[Depends(require_actor)])
    app.include_router(state.router, dependencies=[Depends(require_actor)])
    app.include_router(upgrades.router, dependencies=[Depends(require_actor)])
    for router in (people.router, user_sessions.router, bundles.router, audit.router):
        app.include_router(router, dependencies=[Depends(require_actor)])
    app.include_router(applications.reports_router)
    app.include_router(metrics.router)  # its own token: api.metrics
    app.add_middleware(
        BodyLimitMiddleware, limits=BodyLimits.of(services.settings), tokens=services.identity
    )
    app.add_middleware(RequestMetricsMiddleware, metrics=app.state.metrics.requests)  # outermost
    return app
