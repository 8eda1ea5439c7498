"""The runner's reports, parsed as the server parses them: Spark's real progress JSON (captured
from real queries: ``tests/spark/test_backlog.py`` wrote ``data/kafka_progress.json``; a
windowed count on Spark's rate source wrote ``data/state_progress.json``), and what is refused,
each error naming its path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.progress import application_figures, figures_of, with_backlog
from streamjobs.domain.reports import (
    BacklogReport,
    DriverReport,
    HeartbeatReport,
    ProgressReport,
    TerminatedReport,
    parse_reports,
    progress_report,
    stored_report,
)

DATA = Path(__file__).parent / "data"
KAFKA = json.loads((DATA / "kafka_progress.json").read_text())
STATE = json.loads((DATA / "state_progress.json").read_text())


def numbered(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**event, "sequence": index} for index, event in enumerate(events)]


def paths(events: list[Any]) -> list[str]:
    with pytest.raises(InvalidInput) as refused:
        parse_reports(events)
    return [f"{error.path}: {error.message}" for error in refused.value.errors]


def test_real_kafka_progress_reports_parse_and_go_back_on_the_wire_unchanged() -> None:
    reports = parse_reports(numbered(*KAFKA))
    assert all(isinstance(report, ProgressReport) for report in reports)
    first = reports[0]
    assert isinstance(first, ProgressReport)
    assert first.progress.batch_id == 0
    assert first.progress.sources is not None
    topic = next(iter(KAFKA[0]["progress"]["sources"][0]["endOffset"]))
    assert first.progress.sources[0].kafka_end_offsets() == {(topic, 0): 10, (topic, 1): 10}
    assert [report.to_wire() for report in reports] == numbered(*KAFKA)  # extras kept


def test_figures_of_a_kafka_query_behind_then_caught_up() -> None:
    first, last = (figures_of(report["progress"]) for report in (KAFKA[0], KAFKA[-1]))
    assert (first["recordsBehind"], first["maxPartitionRecordsBehind"]) == (100, 50)
    assert first["inputAvailable"] is True
    assert first["offsetsBehindLatest"] == 50  # Spark's own metric, as before
    assert first["secondsBehind"] is None  # until the runner's backlog report says
    assert (last["recordsBehind"], last["maxPartitionRecordsBehind"]) == (0, 0)
    assert last["secondsBehind"] == 0.0
    assert last["inputAvailable"] is False
    progress = KAFKA[-1]["progress"]
    started = progress["timestamp"].replace("Z", "+00:00")
    took = progress["durationMs"]["triggerExecution"]
    assert last["lastCommittedAt"] > started
    assert last["lastInputAt"] == last["lastCommittedAt"]
    assert took > 0


def test_a_backlog_report_gives_the_seconds_behind_until_a_newer_batch() -> None:
    figures = figures_of(KAFKA[0]["progress"])
    backlog = BacklogReport(name="q", batch_id=0, seconds_behind=42.5)
    assert with_backlog(figures, backlog)["secondsBehind"] == 42.5
    behind_still = figures_of(KAFKA[1]["progress"], with_backlog(figures, backlog))
    assert behind_still["secondsBehind"] == 42.5  # still behind: the last known age stands
    stale = BacklogReport(name="q", batch_id=0, seconds_behind=99.0)
    assert with_backlog(behind_still, stale)["secondsBehind"] == 42.5


def test_state_figures_from_a_real_windowed_count() -> None:
    progress = STATE[-1]
    figures = figures_of(progress)
    operators = progress["stateOperators"]
    assert figures["stateMemoryBytes"] == sum(op["memoryUsedBytes"] for op in operators) > 0
    assert figures["stateRows"] == sum(op["numRowsTotal"] for op in operators)
    assert figures["watermark"] == progress["eventTime"]["watermark"]
    assert figures["recordsBehind"] is None  # no Kafka source
    assert figures["inputAvailable"] is False  # the rate source reports its latest offset


def test_application_figures_add_up_the_queries() -> None:
    behind, caught_up = figures_of(KAFKA[0]["progress"]), figures_of(KAFKA[-1]["progress"])
    behind["secondsBehind"] = 30.0
    figures = application_figures({"a": behind, "b": caught_up})
    assert figures["recordsBehind"] == 100
    assert figures["maxPartitionRecordsBehind"] == 50
    assert figures["secondsBehind"] == 30.0
    assert figures["inputAvailable"] is True
    assert figures["lastCommittedAt"] == caught_up["lastCommittedAt"]


def test_every_kind_of_report_parses() -> None:
    events = numbered(
        {"type": "driver", "sparkApplicationId": "local-1", "uiUrl": "http://d:4040"},
        {"type": "heartbeat", "timestamp": "2026-01-01T00:00:00+00:00"},
        {"type": "started", "id": "q1", "runId": "r1", "name": "q"},
        {"type": "idle", "id": "q1", "runId": "r1", "name": "q"},
        {"type": "terminated", "id": "q1", "runId": "r1", "name": "q", "exception": "boom"},
        {"type": "backlog", "name": "q", "batchId": 3, "secondsBehind": 1.5},
        {"type": "plan", "name": "job", "output": "o", "plan": "== Physical Plan =="},
        {"type": "badRecords", "name": "job", "input": "orders", "count": 3},
        {"type": "written", "name": "job", "output": "o", "where": "/out"},
    )
    reports = parse_reports(events)
    assert [report.to_wire() for report in reports] == events
    assert isinstance(reports[0], DriverReport)
    assert reports[0].spark_application_id == "local-1"
    assert isinstance(reports[1], HeartbeatReport)
    assert isinstance(reports[4], TerminatedReport)
    assert reports[4].exception == "boom"


def test_wrong_types_are_refused_naming_their_paths() -> None:
    progress = copy.deepcopy(KAFKA[0])
    progress["progress"]["batchId"] = "seven"
    progress["progress"]["sources"][0]["numInputRows"] = 1.5
    progress["progress"]["durationMs"]["addBatch"] = "slow"
    events = numbered({"type": "heartbeat"}, {"type": "heartbeat"}, {"type": "heartbeat"}, progress)
    assert paths(events) == [
        "events[3].progress.batchId: should be a valid integer",
        "events[3].progress.durationMs.addBatch: should be a valid integer",
        "events[3].progress.sources[0].numInputRows: should be a valid integer",
    ]
    assert paths(numbered({"type": "badRecords", "input": "i", "count": "3"})) == [
        "events[0].count: should be a valid integer"
    ]


def test_an_unknown_type_is_refused_naming_it() -> None:
    [problem] = paths(numbered({"type": "heartbeet"}))
    assert problem.startswith("events[0].type: unknown report type 'heartbeet' (known: driver,")
    assert paths(numbered({"name": "no type"})) == [
        "events[0].type: must be a string naming the report's type"
    ]


def test_missing_fields_are_refused_naming_their_paths() -> None:
    assert paths([{"type": "progress"}]) == [
        "events[0].sequence: must be an integer",
        "events[0].progress: is required",
    ]
    assert paths(numbered({"type": "written", "output": "o"})) == ["events[0].where: is required"]
    assert paths(numbered({"type": "backlog", "secondsBehind": 1.0})) == [
        "events[0].batchId: is required"
    ]
    assert paths([{"type": "heartbeat", "sequence": True}, "text"]) == [
        "events[0].sequence: must be an integer",
        "events[1]: must be an object",
    ]


def test_a_stored_payload_from_before_the_checks_still_reads_without_its_bad_fields() -> None:
    old = copy.deepcopy(KAFKA[0])
    old["progress"]["inputRowsPerSecond"] = "fast"
    report = stored_report(old)
    assert isinstance(report, ProgressReport)
    assert report.progress.input_rows_per_second is None
    assert report.progress.batch_id == 0
    assert stored_report({"type": "nothing we know"}) is None
    assert stored_report({"type": "written"}) is None


def test_the_runner_keeps_a_progress_report_whose_odd_field_the_model_refuses() -> None:
    odd = {**KAFKA[0]["progress"], "numInputRows": "twenty"}
    report = progress_report(odd, id="q1", run_id="r1", name="q")
    assert report.progress.num_input_rows is None
    assert report.progress.batch_id == 0
    assert report.to_wire()["runId"] == "r1"
