"""Reports over HTTP, parsed by ``domain.reports``: a batch with one bad event is refused whole
with 422 problem+json naming each field, and a good batch from a real Kafka query becomes the
application's figures (records behind, then seconds behind from a backlog report)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.api.problems import error_paths, problem_of
from tests.api.test_report_token_lifetime import running
from tests.staged_server import Stage, stage

__all__ = ["stage"]
KAFKA = json.loads((Path(__file__).parent.parent / "unit/data/kafka_progress.json").read_text())


def progress_items(stage: Stage, application_id: str) -> list[dict[str, Any]]:
    path = f"/api/v1/applications/{application_id}/progress"
    items: list[dict[str, Any]] = stage.api.get(path).json()["items"]
    return items


def test_bad_reports_are_422_naming_each_path_and_nothing_is_stored(stage: Stage) -> None:
    application_id = running(stage)
    wrong = copy.deepcopy(KAFKA[0])
    wrong["progress"]["batchId"] = "seven"
    events = [
        {**KAFKA[1], "sequence": 1},
        {**wrong, "sequence": 2},
        {"type": "heartbeet", "sequence": 3},
        {"type": "written", "sequence": 4, "output": "o"},
    ]
    answer = stage.report(application_id, events)
    assert error_paths(answer) == [
        "events[1].progress.batchId",
        "events[2].type",
        "events[3].where",
    ]
    assert "unknown report type 'heartbeet'" in problem_of(answer, 422)["detail"]
    assert [item["type"] for item in progress_items(stage, application_id)] == ["heartbeat"]


def test_kafka_progress_and_backlog_become_the_applications_figures(stage: Stage) -> None:
    application_id = running(stage)
    name = KAFKA[0]["name"]
    behind = {**KAFKA[0], "sequence": 1}
    backlog = {"type": "backlog", "sequence": 2, "name": name, "batchId": 0, "secondsBehind": 75.5}
    assert stage.report(application_id, [behind, backlog]).json() == {"accepted": 2}
    metrics = stage.api.get(f"/api/v1/applications/{application_id}/metrics").json()["latest"]
    assert (metrics["recordsBehind"], metrics["maxPartitionRecordsBehind"]) == (100, 50)
    assert metrics["secondsBehind"] == 75.5
    assert metrics["inputAvailable"] is True
    assert metrics["lastCommittedAt"] is not None
    caught_up = {**KAFKA[-1], "sequence": 3}
    assert stage.report(application_id, [caught_up]).json() == {"accepted": 1}
    metrics = stage.api.get(f"/api/v1/applications/{application_id}/metrics").json()["latest"]
    assert (metrics["recordsBehind"], metrics["secondsBehind"]) == (0, 0.0)
    assert metrics["inputAvailable"] is False
    stored = progress_items(stage, application_id)[1]["event"]
    assert stored == behind  # the payload reads back as it was sent
