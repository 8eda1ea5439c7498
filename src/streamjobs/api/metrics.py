"""The server's Prometheus metrics: ``GET /metrics`` in the text format, and the registry behind it.

Every server has its own ``CollectorRegistry`` (never the library's global one, so that two
servers in one process, as in the tests, never share a series). It holds:

- ``StoreCollector``: per job (its newest application) the state, restarts and latest figures,
  read from the store at each scrape in one transaction (``services.metrics_reading``), and the
  notification outbox's depth and delivery failures;
- the supervisor's tick duration (``tick_duration.time``, the supervisor's ``tick_timer``);
- the HTTP request latency by route template (``api.request_metrics``).

``/metrics`` is served on the server's port to whoever sends ``STREAMJOBS_METRICS_TOKEN`` as a
bearer token (its digest compared in constant time), and open on ``STREAMJOBS_METRICS_PORT``
(``MetricsPort``) when that is set. With neither set it answers 404 saying which to set.
docs/metrics.md lists every series.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    CollectorRegistry,
    Histogram,
    disable_created_metrics,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pydantic import SecretStr

from streamjobs.api.request_metrics import RequestMetrics
from streamjobs.domain.errors import NotFound, StreamjobsError, Unauthenticated
from streamjobs.domain.states import AppState
from streamjobs.services.metrics_reading import FIGURES, PROGRESS_AGE, MetricsReader
from streamjobs.settings import Settings

APPLICATION_LABELS = ("job", "bundle", "namespace", "application")
"""The labels of every per-application series."""

FIGURE_HELP = {
    "input_rows_per_second": "Rows read per second by the latest micro-batch (all queries).",
    "processed_rows_per_second": "Rows processed per second by the latest micro-batch.",
    "batch_duration_seconds": "Duration of the latest micro-batch (the slowest query's).",
    "kafka_records_behind": "Kafka records not yet read, summed over partitions.",
    "kafka_max_partition_records_behind": "Kafka records not yet read, in the partition "
    "furthest behind.",
    "seconds_behind": "Age of the oldest record not yet processed (broker timestamps).",
    "state_rows": "Rows held in the state stores of stateful operators.",
    "state_memory_bytes": "Memory used by the state stores of stateful operators.",
    PROGRESS_AGE: "Seconds since the latest committed micro-batch (or, for a driver that "
    "reports no batches, its latest report).",
}


class StoreCollector(Collector):
    """The series read from the store at scrape time.

    Contract: each scrape reads the store once (``MetricsReader.read``, one transaction); a
    figure the application has not reported gives no sample, and an ended or suspended
    application gives only its state and restarts.
    """

    def __init__(self, reader: MetricsReader) -> None:
        self._reader = reader

    def describe(self) -> Iterable[Metric]:
        """The families without samples: registering the collector reads nothing."""
        return _Families().all()

    def collect(self) -> Iterable[Metric]:
        scrape = self._reader.read()
        families = _Families()
        for sample in scrape.applications:
            record = sample.record
            labels = [record.job, record.bundle, record.namespace, record.application]
            for each in AppState:
                value = 1.0 if record.state is each else 0.0
                families.state.add_metric([*labels, each.value], value)
            families.restarts.add_metric(labels, float(record.restarts))
            for name, figure in sample.figures.items():
                families.figures[name].add_metric(labels, figure)
        families.queue_depth.add_metric([], float(scrape.notification_queue_depth))
        families.delivery_failures.add_metric([], float(scrape.notification_delivery_failures))
        return families.all()


class _Families:
    """The metric families of one scrape, empty until the collector fills them."""

    def __init__(self) -> None:
        labels = list(APPLICATION_LABELS)
        self.state = GaugeMetricFamily(
            "streamjobs_application_state",
            "1 for the state the application is in, 0 for every other state.",
            labels=[*labels, "state"],
        )
        self.restarts = CounterMetricFamily(
            "streamjobs_application_restarts",
            "Restarts of the application under its restart policy.",
            labels=labels,
        )
        self.figures = {
            name: GaugeMetricFamily(
                f"streamjobs_application_{name}", FIGURE_HELP[name], labels=labels
            )
            for name in [*FIGURES, PROGRESS_AGE]
        }
        self.queue_depth = GaugeMetricFamily(
            "streamjobs_notification_queue_depth",
            "Notifications waiting in the outbox to be delivered.",
        )
        self.delivery_failures = CounterMetricFamily(
            "streamjobs_notification_delivery_failures",
            "Failed delivery attempts of notifications the outbox keeps.",
        )

    def all(self) -> list[Metric]:
        return [
            self.state,
            self.restarts,
            *self.figures.values(),
            self.queue_depth,
            self.delivery_failures,
        ]


class ServerMetrics:
    """One server's registry and the instruments its parts feed."""

    def __init__(self, reader: MetricsReader) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # the process's: no `_created` series
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(StoreCollector(reader))
        self.tick_duration = Histogram(
            "streamjobs_supervisor_tick_duration_seconds",
            "Duration of one supervisor tick over every supervised application.",
            registry=self.registry,
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
        )
        self.requests = RequestMetrics(self.registry)

    def exposition(self) -> bytes:
        """Every series in the Prometheus text format 0.0.4, which every Prometheus reads
        (reads the store)."""
        return generate_latest(self.registry)


class MetricsPort:
    """The metrics served open on a port of their own (``STREAMJOBS_METRICS_PORT``), by
    prometheus_client's own HTTP server in a background thread, until ``close``."""

    def __init__(self, metrics: ServerMetrics, *, host: str, port: int) -> None:
        self._server, self._thread = start_http_server(port, addr=host, registry=metrics.registry)

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


class MetricsNotServed(NotFound):
    """``/metrics`` is not served on this port; the detail says which setting serves it."""

    def __init__(self, detail: str) -> None:
        StreamjobsError.__init__(self, detail)


def not_served_detail(settings: Settings) -> str:
    """Why ``/metrics`` is not served on the server's port, and what to set."""
    if settings.metrics_port is not None:
        return (
            f"the metrics are served open on port {settings.metrics_port} of the server's host "
            "(STREAMJOBS_METRICS_PORT), not here; set STREAMJOBS_METRICS_TOKEN to serve them "
            "here to Prometheus sending that token as a bearer token"
        )
    return (
        "the metrics are not served: set STREAMJOBS_METRICS_TOKEN (Prometheus sends it as a "
        "bearer token to this port) or STREAMJOBS_METRICS_PORT (a port of their own, open)"
    )


def check_metrics_token(settings: Settings, authorization: str | None) -> None:
    """Refuse (``MetricsNotServed``, ``Unauthenticated``) a request that may not read metrics."""
    expected: SecretStr | None = settings.metrics_token
    if expected is None:
        raise MetricsNotServed(not_served_detail(settings))
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the metrics need the metrics token as a bearer token")
    if not hmac.compare_digest(_digest(token.strip()), _digest(expected.get_secret_value())):
        raise Unauthenticated("that is not the metrics token")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


router = APIRouter(tags=["meta"])


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The metrics in the Prometheus text format, for the metrics token (not in the OpenAPI
    document: it is no JSON API route; docs/metrics.md describes it)."""
    settings: Settings = request.app.state.services.settings
    check_metrics_token(settings, request.headers.get("authorization"))
    server_metrics: ServerMetrics = request.app.state.metrics
    return Response(server_metrics.exposition(), media_type=CONTENT_TYPE_PLAIN_0_0_4)
