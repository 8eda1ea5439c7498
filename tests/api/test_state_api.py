"""``GET /api/v1/applications/{id}/state`` against a real server whose state tool is scripted
(``tests.state_stage``): the operators from progress and metadata, the preview, what is kept
and read again, bounds, refusals, and every way the tool can fail as a 409, never a 500."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.launch.base import LaunchFailed
from streamjobs.launch.tool_runs import ToolResult, ToolRun
from tests.api.problems import problem_of
from tests.factories import python_manifest
from tests.state_stage import JOB, QUERY, StateStage, state_stage

__all__ = ["state_stage"]

pytestmark = pytest.mark.snapshots


def state_of(stage: StateStage, application_id: str, **params: Any) -> dict[str, Any]:
    answer = stage.api.get(f"/api/v1/applications/{application_id}/state", params=params)
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


def test_each_operator_with_its_figures_watermark_and_the_batches_its_state_covers(
    state_stage: StateStage,
) -> None:
    application_id = state_stage.running()
    checkpoint = state_stage.checkpoint()
    state_stage.progress(application_id, batch=3, rows=5)
    state_stage.progress(application_id, batch=4, rows=7)

    document = state_of(state_stage, application_id)

    assert document["application"] == application_id
    assert document["name"] == f"{JOB}-1"
    assert document["state"] == "RUNNING"
    assert document["checkpoint"] == checkpoint.as_uri()
    assert document["readAt"] is not None
    assert document["preview"] is None
    (query,) = document["queries"]
    assert query["query"] == QUERY
    assert query["name"] == f"{JOB}/{QUERY}"
    assert query["batchId"] == 4
    assert query["watermark"] == "2024-01-01T00:01:00.000Z"
    assert query["operators"] == [
        {
            "id": 0,
            "name": "stateStoreSave",
            "stores": ["default"],
            "partitions": 2,
            "rows": 7,
            "rowsUpdated": 1,
            "rowsRemoved": 0,
            "rowsDroppedByWatermark": 0,
            "memoryBytes": 2048,
            "batches": {"min": 0, "max": 4},
        }
    ]
    (run,) = state_stage.tool.runs
    assert run.tool == "state"
    assert run.readable == [str(checkpoint)]  # bound read-only; nothing writable but its own
    assert run.writable == []
    assert run.arguments[:2] == ["--checkpoint", str(checkpoint)]
    assert "--operator" not in run.arguments
    assert run.run_as == "admin"
    assert state_stage.tool.directories_there == [True]
    assert not run.directory.exists()  # the work directory goes once the answer is read


def test_a_preview_of_one_operator_and_its_bounds(state_stage: StateStage) -> None:
    application_id = state_stage.running()
    state_stage.checkpoint()
    state_stage.progress(application_id, batch=4, rows=3)

    document = state_of(state_stage, application_id, operator=0, query=QUERY, limit=2)

    preview = document["preview"]
    assert preview["operatorId"] == 0
    assert preview["query"] == QUERY
    assert [row["key"] for row in preview["rows"]] == ['{"k": "key-0"}', '{"k": "key-1"}']
    assert preview["more"] is True
    arguments = state_stage.tool.runs[-1].arguments
    assert arguments[arguments.index("--operator") + 1] == "0"
    assert arguments[arguments.index("--limit") + 1] == "2"
    assert arguments[arguments.index("--query") + 1] == QUERY

    url = f"/api/v1/applications/{application_id}/state"
    bad: list[tuple[dict[str, str | int], str]] = [
        ({"operator": 0, "limit": 101}, "query.limit"),
        ({"operator": 0, "limit": 0}, "query.limit"),
        ({"operator": -1}, "query.operator"),
        ({"operator": 0, "query": "../elsewhere"}, "query.query"),
        ({"operator": 0, "storeName": "a/b"}, "query.storeName"),
        ({"query": QUERY}, "query.operator"),
    ]
    for params, path in bad:
        problem = problem_of(state_stage.api.get(url, params=params), 422)
        assert problem["errors"][0]["path"] == path, params


def test_answers_are_kept_briefly_per_latest_batch(state_stage: StateStage) -> None:
    application_id = state_stage.running()
    state_stage.checkpoint()
    state_stage.progress(application_id, batch=4, rows=3)

    state_of(state_stage, application_id)
    state_of(state_stage, application_id)
    assert len(state_stage.tool.runs) == 1

    state_stage.progress(application_id, batch=5, rows=4)
    assert state_of(state_stage, application_id)["queries"][0]["operators"][0]["rows"] == 4
    assert len(state_stage.tool.runs) == 2

    state_stage.clock.advance(31)
    state_of(state_stage, application_id)
    assert len(state_stage.tool.runs) == 3

    state_of(state_stage, application_id, operator=0)
    assert len(state_stage.tool.runs) == 4  # a preview is a read of its own


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (ToolResult(None, None, "", timed_out=True), "took longer than 120 seconds"),
        (
            ToolResult(2, {"error": "query 'evens' has no stateful operator 7"}, "", False),
            "no stateful operator 7",
        ),
        (ToolResult(1, None, "log line\nSparkException: boom", False), "exit code 1:\nlog line"),
        (ToolResult(0, {"queries": "not a list"}, "", False), "answer is not readable"),
        (ToolResult(0, None, "", False), "wrote no answer"),
    ],
)
def test_a_failed_read_is_a_409_saying_why(
    state_stage: StateStage, answer: ToolResult, said: str
) -> None:
    application_id = state_stage.running()
    state_stage.checkpoint()
    state_stage.tool.answer = lambda run: answer
    problem = problem_of(state_stage.api.get(f"/api/v1/applications/{application_id}/state"), 409)
    assert problem["title"] == "State unreadable"
    assert said in problem["detail"]


def test_a_tool_that_cannot_start_is_a_409(state_stage: StateStage) -> None:
    application_id = state_stage.running()
    state_stage.checkpoint()

    def no_sandbox(run: ToolRun) -> ToolResult:
        raise LaunchFailed("bubblewrap (bwrap) is not installed")

    state_stage.tool.answer = no_sandbox
    problem = problem_of(state_stage.api.get(f"/api/v1/applications/{application_id}/state"), 409)
    assert "bubblewrap" in problem["detail"]


def test_applications_without_state_to_read_are_refused_saying_why(
    state_stage: StateStage,
) -> None:
    api = state_stage.api
    first = state_stage.running()
    problem = problem_of(api.get(f"/api/v1/applications/{first}/state"), 409)
    assert "does not exist yet" in problem["detail"]

    state_stage.checkpoint()
    api.post(f"/api/v1/jobs/{JOB}/stop").raise_for_status()
    state_stage.tick()
    state_stage.tick()
    second = state_stage.running()
    problem = problem_of(api.get(f"/api/v1/applications/{first}/state"), 409)
    assert f"newer application {JOB}-2" in problem["detail"]
    assert state_of(state_stage, second)["state"] == "RUNNING"

    unsafe = state_stage.running("unsafe", processing={"guarantee": "NONE"})
    problem = problem_of(api.get(f"/api/v1/applications/{unsafe}/state"), 409)
    assert "keeps no checkpoint" in problem["detail"]

    api.put("/api/v1/jobs/program", json=python_manifest("program")).raise_for_status()
    program = api.post("/api/v1/jobs/program/run").json()["id"]
    problem = problem_of(api.get(f"/api/v1/applications/{program}/state"), 409)
    assert "not a pipeline" in problem["detail"]

    problem_of(api.get("/api/v1/applications/nope/state"), 404)
    assert len(state_stage.tool.runs) == 1  # only the readable one was read


def test_those_who_may_not_view_the_job_do_not_learn_the_application_exists(
    state_stage: StateStage,
) -> None:
    application_id = state_stage.running()
    state_stage.checkpoint()
    admin = Actor(Principal("admin", is_admin=True))
    state_stage.services.people.create_user("outsider", actor=admin)
    token = state_stage.services.identity.issue_token("outsider", "t", actor=admin)
    answer = state_stage.api.get(
        f"/api/v1/applications/{application_id}/state",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert problem_of(answer, 404)["detail"] == f"application {application_id!r} does not exist"
    assert state_stage.tool.runs == []
