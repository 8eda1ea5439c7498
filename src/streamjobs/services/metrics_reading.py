"""What a Prometheus scrape shows, read from the store in one short transaction.

``/metrics`` (``api.metrics``) calls ``MetricsReader.read`` at every scrape: each job's newest
application with its state, restarts and latest figures, and the notification outbox's depth and
failures, all from one transaction so that one scrape is one consistent picture. The figures
are picked out of ``application.latest`` (``domain.progress`` and the report figures); a figure
the driver has not reported is absent (no sample), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from streamjobs.domain.clock import Clock
from streamjobs.domain.health import figure_number, figure_time
from streamjobs.domain.states import ACTIVE_STATES
from streamjobs.store.application_metrics import ApplicationMetricsRecord
from streamjobs.store.db import Store

FIGURES: dict[str, tuple[str, float]] = {
    "input_rows_per_second": ("inputRowsPerSecond", 1.0),
    "processed_rows_per_second": ("processedRowsPerSecond", 1.0),
    "batch_duration_seconds": ("batchDurationMs", 0.001),
    "kafka_records_behind": ("recordsBehind", 1.0),
    "kafka_max_partition_records_behind": ("maxPartitionRecordsBehind", 1.0),
    "seconds_behind": ("secondsBehind", 1.0),
    "state_rows": ("stateRows", 1.0),
    "state_memory_bytes": ("stateMemoryBytes", 1.0),
}
"""Each figure a metric shows: its name in the metric (after ``streamjobs_application_``), the
key of ``application.latest`` it comes from and the factor to base units (ms to seconds)."""

PROGRESS_AGE = "last_progress_age_seconds"


@dataclass(frozen=True)
class ApplicationSample:
    """One job's newest application as a scrape shows it."""

    record: ApplicationMetricsRecord
    figures: dict[str, float] = field(default_factory=dict)
    """By the names of ``FIGURES`` and ``PROGRESS_AGE``; only those known."""


@dataclass(frozen=True)
class MetricsScrape:
    """Everything one scrape shows of the store."""

    applications: list[ApplicationSample]
    notification_queue_depth: int
    notification_delivery_failures: int


class MetricsReader:
    """Reads the store for a scrape."""

    def __init__(self, *, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def read(self) -> MetricsScrape:
        """The store as one scrape shows it, read in one transaction."""
        with self._store.transaction() as repos:
            records = repos.application_metrics.newest_per_job()
            depth = repos.notifications.depth()
            failures = repos.notifications.failures_total()
        now = self._clock.now()
        return MetricsScrape(
            applications=[ApplicationSample(record, figures_of(record, now)) for record in records],
            notification_queue_depth=depth,
            notification_delivery_failures=failures,
        )


def figures_of(record: ApplicationMetricsRecord, now: datetime) -> dict[str, float]:
    """The figures of an application that runs (``ACTIVE_STATES``); none of one that has ended
    or is suspended, whose last figures would read as if it still ran at that pace."""
    if record.state not in ACTIVE_STATES:
        return {}
    latest = record.latest
    figures = {
        name: value * factor
        for name, (key, factor) in FIGURES.items()
        if (value := figure_number(latest.get(key))) is not None
    }
    progress_at = figure_time(latest.get("lastCommittedAt")) or record.last_heartbeat_at
    if progress_at is not None:
        figures[PROGRESS_AGE] = max(0.0, (now - progress_at).total_seconds())
    return figures
