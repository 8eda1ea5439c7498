"""What a scrape reads of the store (SQLite and PostgreSQL): each job's newest application, with
the job's bundle and namespace, and the figures ``MetricsReader`` picks out of it."""

from __future__ import annotations

from datetime import timedelta

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.states import AppState
from streamjobs.services.metrics_reading import MetricsReader
from streamjobs.store import Store
from tests.store.conftest import AddApplication, AddJob, change, finish


def test_each_jobs_newest_application_and_its_figures(
    store: Store, add_job: AddJob, add_application: AddApplication, clock: FakeClock
) -> None:
    add_job("alpha", bundle="payments", namespace="lake")
    add_job("beta")  # never run: nothing to show
    add_job("gamma")
    finish(store, add_application("alpha", bundle="payments", namespace="lake"), clock)
    clock.advance(60)
    newest = add_application("alpha", bundle="payments", namespace="lake")
    committed = clock.now() + timedelta(seconds=5)
    latest = {
        "inputRowsPerSecond": 10,
        "batchDurationMs": 250,
        "recordsBehind": 3,
        "secondsBehind": None,
        "stateRows": True,
        "lastCommittedAt": committed.isoformat().replace("+00:00", "Z"),
    }
    change(store, newest, clock.now(), state=AppState.RUNNING, restarts=2, latest=latest)
    gamma = add_application("gamma")
    gamma = change(store, gamma, clock.now(), latest={"inputRowsPerSecond": 4.0})
    finish(store, gamma, clock)
    clock.advance(65)

    with store.transaction() as repos:
        records = repos.application_metrics.newest_per_job()
    assert [(r.job, r.application, r.state) for r in records] == [
        ("alpha", "alpha-2", AppState.RUNNING),
        ("gamma", "gamma-1", AppState.FAILED),
    ]
    assert (records[0].bundle, records[0].namespace, records[0].restarts) == ("payments", "lake", 2)
    assert records[0].latest["recordsBehind"] == 3

    scrape = MetricsReader(store=store, clock=clock).read()
    alpha, gamma = scrape.applications
    assert alpha.figures == {
        "input_rows_per_second": 10.0,
        "batch_duration_seconds": 0.25,
        "kafka_records_behind": 3.0,
        "last_progress_age_seconds": 60.0,
    }  # None and a boolean are no figures
    assert gamma.figures == {}  # it has ended: its last rate is not its pace now
    assert (scrape.notification_queue_depth, scrape.notification_delivery_failures) == (0, 0)
