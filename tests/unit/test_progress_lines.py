"""The lines `streamjobs pipeline run` prints for a person."""

from __future__ import annotations

from streamjobs.runner.reporting import progress_line

PROGRESS = {
    "type": "progress",
    "name": "orders/paid",
    "progress": {
        "batchId": 7,
        "numInputRows": 1200,
        "inputRowsPerSecond": 400.0,
        "processedRowsPerSecond": 800.5,
        "durationMs": {"triggerExecution": 1500},
        "sources": [
            {"metrics": {"maxOffsetsBehindLatest": "30"}},
            {"metrics": {"maxOffsetsBehindLatest": "12"}},
        ],
        "observedMetrics": {"orders_bad_records": {"badRecords": 3}},
    },
}


def test_a_batch_line_has_the_figures_a_person_looks_for() -> None:
    assert progress_line(PROGRESS) == (
        "[orders/paid] batch 7, rows 1200, in 400.0/s, processed 800.5/s, took 1500 ms, "
        "offsets behind 42, badRecords 3"
    )


def test_records_behind_come_from_the_kafka_offsets_when_spark_reports_them() -> None:
    source = {"endOffset": {"t": {"0": 10, "1": 5}}, "latestOffset": {"t": {"0": 40, "1": 5}}}
    event = {**PROGRESS, "progress": {**PROGRESS["progress"], "sources": [source]}}
    assert ", records behind 30, " in progress_line(event)


def test_nothing_behind_is_said_without_kafka_sources() -> None:
    event = {**PROGRESS, "progress": {**PROGRESS["progress"], "sources": [{"metrics": {}}]}}
    assert "behind" not in progress_line(event)


def test_a_backlog_report_says_how_old_the_oldest_unprocessed_record_is() -> None:
    backlog = {"type": "backlog", "name": "q", "batchId": 4, "secondsBehind": 12.34}
    assert progress_line(backlog) == "[q] batch 4, oldest unprocessed record 12.3 s old"


def test_other_events() -> None:
    assert progress_line({"type": "started", "name": "q"}) == "[q] query started"
    failed = {"type": "terminated", "name": "q", "exception": "boom"}
    assert progress_line(failed) == "[q] query terminated: boom"
    plan = {"type": "plan", "name": "job", "output": "paid", "plan": "== Physical Plan =="}
    assert progress_line(plan) == "[job] plan of output paid:\n== Physical Plan =="
