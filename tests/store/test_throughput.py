"""An application's throughput buckets, folded as its progress reports are stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, delete

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import NotFound
from streamjobs.store import Store
from streamjobs.store.tables import ApplicationRow
from streamjobs.store.throughput import ThroughputBucketRow, ThroughputTallyRow
from tests.store.conftest import AddApplication, CountRows

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def report(sequence: int, at: datetime, *, query: str = "q", **figures: Any) -> dict[str, Any]:
    """A progress event as the runner sends it."""
    return {
        "type": "progress",
        "sequence": sequence,
        "name": query,
        "id": f"{query}-id",
        "progress": {
            "timestamp": at.isoformat().replace("+00:00", "Z"),
            "batchId": sequence,
            "inputRowsPerSecond": figures.get("input", 1.0),
            "processedRowsPerSecond": figures.get("processed", 2.0),
            "durationMs": {"triggerExecution": figures.get("duration", 100)},
        },
    }


def test_reports_are_folded_into_minute_buckets_once_each(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    first = [report(n, T0 + timedelta(seconds=20 * n), input=float(n)) for n in range(4)]
    with store.transaction() as repos:
        add = repos.applications.add_progress
        add(application.id, attempt=1, events=first, at=clock.now())
        add(application.id, attempt=1, events=first[2:], at=clock.now())  # sent again
        heartbeat = {"type": "heartbeat", "sequence": 4}
        add(application.id, attempt=1, events=[heartbeat], at=clock.now())
    with store.reading() as repos:
        buckets = repos.applications.throughput_buckets(application.id)
    assert [(b.start, b.samples, b.width_seconds) for b in buckets] == [
        (T0, 3, 60),
        (T0 + timedelta(minutes=1), 1, 60),
    ]
    assert buckets[0].input.total == 0.0 + 1.0 + 2.0
    assert buckets[0].input.highest == 2.0
    assert buckets[0].duration.mean == 100.0
    assert buckets[1].first_at == T0 + timedelta(seconds=60)


def test_the_queries_latest_rates_are_summed_across_reports_and_attempts_start_again(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        add = repos.applications.add_progress
        add(application.id, attempt=1, events=[report(0, T0, query="a", input=10.0)], at=T0)
        second = report(1, T0 + timedelta(seconds=1), query="b", input=5.0)
        add(application.id, attempt=1, events=[second], at=T0)
        restarted = report(0, T0 + timedelta(seconds=2), query="b", input=1.0)
        add(application.id, attempt=2, events=[restarted], at=T0)
    with store.reading() as repos:
        (bucket,) = repos.applications.throughput_buckets(application.id)
    assert bucket.samples == 3
    assert bucket.input.total == 10.0 + 15.0 + 1.0
    assert bucket.input.highest == 15.0


def test_a_day_long_application_keeps_its_whole_life_in_bounded_buckets(
    store: Store, add_application: AddApplication, clock: FakeClock, count_rows: CountRows
) -> None:
    application = add_application("orders")
    neighbour = add_application("payments")
    with store.transaction() as repos:
        repos.applications.add_progress(neighbour.id, attempt=1, events=[report(0, T0)], at=T0)
    sequence = 0
    for _hour in range(24):
        events = []
        for _ in range(36):  # a report every 100 s
            clock.advance(100)
            events.append(report(sequence, clock.now(), input=3.0))
            sequence += 1
        with store.transaction() as repos:
            # Folded with a small bound first; storing them then folds nothing twice.
            repos.applications.fold_throughput(
                application.id, attempt=1, events=events, most_buckets=50
            )
            repos.applications.add_progress(
                application.id, attempt=1, events=events, at=clock.now(), keep_last=20
            )
    with store.reading() as repos:
        buckets = repos.applications.throughput_buckets(application.id)
        kept = repos.applications.progress(application.id, limit=500)
        untouched = repos.applications.throughput_buckets(neighbour.id)
    assert len(kept) == 20
    assert len(buckets) <= 50
    assert buckets[0].first_at == T0 + timedelta(seconds=100)
    assert buckets[-1].last_at == clock.now()
    assert sum(bucket.samples for bucket in buckets) == sequence
    assert len({bucket.width_seconds for bucket in buckets}) == 1
    assert {bucket.input.mean for bucket in buckets} == {3.0}
    assert [bucket.samples for bucket in untouched] == [1]
    assert count_rows(ThroughputTallyRow) == 2


def test_no_buckets_before_a_progress_report_and_none_for_an_unknown_application(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        started = {"type": "started", "sequence": 0, "id": "q"}
        repos.applications.add_progress(application.id, attempt=1, events=[started], at=T0)
        assert repos.applications.throughput_buckets(application.id) == []
        assert repos.applications.throughput_buckets("no-such-application") == []
        with pytest.raises(NotFound):
            repos.applications.add_progress("no-such-application", attempt=1, events=[], at=T0)


def test_deleting_an_application_deletes_its_buckets(
    store: Store,
    engine: Engine,
    add_application: AddApplication,
    clock: FakeClock,
    count_rows: CountRows,
) -> None:
    application = add_application("orders")
    with store.transaction() as repos:
        repos.applications.add_progress(application.id, attempt=1, events=[report(0, T0)], at=T0)
    assert count_rows(ThroughputBucketRow) == 1
    with engine.begin() as connection:
        connection.execute(delete(ApplicationRow).where(ApplicationRow.id == application.id))
    assert count_rows(ThroughputBucketRow) == 0
    assert count_rows(ThroughputTallyRow) == 0
