"""How long the server takes to answer, by route: a histogram fed by a plain ASGI middleware.

Each request is labelled by the path template of the route that answered it
(``/api/v1/jobs/{name}``), never by its raw path, so the series stay as few as the routes
whatever the clients ask for; requests no route took (a 404 for an unknown path, a refusal
before routing) share ``route="unmatched"``. The method is one of the usual few or ``other``,
and the status its class (``2xx``, ``4xx``…): a handful of series per route.
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class RequestMetrics:
    """The request latency histogram of one server's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.duration = Histogram(
            "streamjobs_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template.",
            labelnames=("method", "route", "status_class"),
            registry=registry,
            buckets=BUCKETS,
        )

    def observe(self, *, method: str, route: str, status: int, seconds: float) -> None:
        self.duration.labels(
            method if method in METHODS else "other", route, f"{status // 100}xx"
        ).observe(seconds)


class RequestMetricsMiddleware:
    """Times every HTTP request the app answers (``app.add_middleware(RequestMetricsMiddleware,
    metrics=...)``, added last so that it is outermost and counts the other middleware's own
    answers too)."""

    def __init__(self, app: ASGIApp, *, metrics: RequestMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets when the app raises before answering

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.metrics.observe(
                method=str(scope.get("method", "")),
                route=route_template(scope),
                status=status,
                seconds=time.perf_counter() - started,
            )


def route_template(scope: Scope) -> str:
    """The path template of the route the router matched for ``scope`` (it records the route in
    the scope it was given; a mount's prefix for what a mount answered); ``unmatched`` for
    none."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return UNMATCHED
    return path or "/"
