"""Latency figures from a load run's requests: percentiles per route and the rate achieved."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    """One request of a load run; times in seconds from the run's start."""

    route: str
    scheduled: float
    started: float
    ended: float
    status: int

    @property
    def latency(self) -> float:
        """Seconds from the scheduled start to the end of the response."""
        return self.ended - self.scheduled

    @property
    def service(self) -> float:
        """Seconds from the real start to the end of the response."""
        return self.ended - self.started

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class RouteLatency:
    """One route's requests in a load run: how many, how many failed, and percentiles in ms."""

    route: str
    errors: int
    unanswered: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    service_p50_ms: float
    service_p99_ms: float


@dataclass(frozen=True)
class LoadSummary:
    """A load run summed up: the rate achieved and each route's latencies."""

    achieved_rate: float
    requests: int
    errors: int
    unanswered: int
    routes: tuple[RouteLatency, ...]
    behind_ms: float

    def route(self, name: str) -> RouteLatency:
        return next(item for item in self.routes if item.route == name)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` (0-1) quantile of ``values``, interpolating linearly between the two
    nearest ranks (numpy's default, ``statistics.quantiles(method="inclusive")``)."""
    if not values:
        raise ValueError("no values")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be within 0 and 1, not {fraction}")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    weight = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * weight


def summarise(requests: Iterable[Request]) -> LoadSummary:
    """Percentiles per route (of every request) and the rate achieved (of the successful)."""
    every = list(requests)
    if not every:
        raise ValueError("the load run made no requests")
    names = list(dict.fromkeys(request.route for request in every))
    routes = tuple(_route(name, [r for r in every if r.route == name]) for name in names)
    succeeded = [request for request in every if request.ok]
    window = max(r.ended for r in every) - min(r.scheduled for r in every)
    lateness = [max(0.0, r.started - r.scheduled) for r in every]
    return LoadSummary(
        achieved_rate=len(succeeded) / window if window > 0 else 0.0,
        requests=len(every),
        errors=len(every) - len(succeeded),
        unanswered=sum(1 for request in every if request.status == 0),
        routes=routes,
        behind_ms=percentile(lateness, 0.99) * 1000,
    )


def _route(name: str, requests: list[Request]) -> RouteLatency:
    latencies = [request.latency * 1000 for request in requests]
    service = [request.service * 1000 for request in requests]
    return RouteLatency(
        route=name,
        errors=sum(1 for request in requests if not request.ok),
        unanswered=sum(1 for request in requests if request.status == 0),
        p50_ms=percentile(latencies, 0.5),
        p99_ms=percentile(latencies, 0.99),
        max_ms=max(latencies),
        service_p50_ms=percentile(service, 0.5),
        service_p99_ms=percentile(service, 0.99),
    )
