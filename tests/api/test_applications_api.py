"""Applications over HTTP against a real server, with the fake launcher and a supervisor the test
ticks: Run, Stop, Resume, Abort, lists and filters, reports, events, metrics and logs."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api.problems import problem_of
from tests.staged_server import Stage, stage

__all__ = ["stage"]


def running(stage: Stage) -> str:
    started = stage.api.post("/api/v1/jobs/ticks/run")
    assert started.status_code == 201, started.text
    application_id: str = started.json()["id"]
    assert started.headers["location"] == f"/api/v1/applications/{application_id}"
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    return application_id


def test_run_then_a_second_run_is_409_naming_the_live_one(stage: Stage) -> None:
    application_id = running(stage)
    application = stage.api.get(f"/api/v1/applications/{application_id}").json()
    assert application["state"] == "RUNNING"
    assert application["name"] == "ticks-1"
    assert application["triggeredBy"] == "admin"
    assert application["attempts"][0]["number"] == 1
    problem = problem_of(stage.api.post("/api/v1/jobs/ticks/run"), 409)
    assert "ticks-1" in problem["detail"]
    status = stage.api.get("/api/v1/jobs/ticks").json()["status"]
    assert status["phase"] == "RUNNING"
    assert status["application"]["name"] == "ticks-1"
    listed = stage.api.get("/api/v1/jobs", params={"status": "RUNNING"}).json()["items"]
    assert [job["status"]["application"]["id"] for job in listed] == [application_id]


def test_run_of_an_unknown_job_is_404(stage: Stage) -> None:
    problem_of(stage.api.post("/api/v1/jobs/nope/run"), 404)
    problem_of(stage.api.get("/api/v1/applications/app-nope"), 404)
    problem_of(stage.api.get("/api/v1/jobs/nope/applications"), 404)


def test_stop_and_resume_without_a_live_or_suspended_application_are_409(stage: Stage) -> None:
    problem_of(stage.api.post("/api/v1/jobs/ticks/stop"), 409)
    running(stage)
    assert (
        "only a suspended" in problem_of(stage.api.post("/api/v1/jobs/ticks/resume"), 409)["detail"]
    )


def test_stop_then_the_history_lists_with_filters(stage: Stage) -> None:
    first = running(stage)
    stopping = stage.api.post("/api/v1/jobs/ticks/stop")
    assert stopping.status_code == 202
    assert stopping.json()["state"] == "TERMINATING"
    stage.tick()
    stage.tick()
    assert stage.api.get(f"/api/v1/applications/{first}").json()["state"] == "STOPPED"
    second = running(stage)
    listed = stage.api.get("/api/v1/jobs/ticks/applications").json()
    assert [item["id"] for item in listed["items"]] == [second, first]
    assert listed["total"] == 2
    stopped = stage.api.get("/api/v1/jobs/ticks/applications", params={"status": "stopped"})
    assert [item["id"] for item in stopped.json()["items"]] == [first]
    by_name = stage.api.get("/api/v1/applications", params={"search": "ticks-2"}).json()
    assert [item["id"] for item in by_name["items"]] == [second]
    mine = stage.api.get("/api/v1/applications", params={"triggeredBy": "someone-else"}).json()
    assert mine["items"] == []
    bad = problem_of(stage.api.get("/api/v1/applications", params={"status": "DONE"}), 422)
    assert bad["errors"][0]["path"] == "query.status"


def test_abort_is_202_then_409_once_terminal(stage: Stage) -> None:
    application_id = running(stage)
    aborting = stage.api.post(f"/api/v1/applications/{application_id}/abort")
    assert aborting.status_code == 202
    stage.tick()
    stage.tick()
    assert stage.api.get(f"/api/v1/applications/{application_id}").json()["state"] == "ABORTED"
    problem = problem_of(stage.api.post(f"/api/v1/applications/{application_id}/abort"), 409)
    assert "cannot take an abort" in problem["detail"]
    kinds = [
        event["kind"]
        for event in stage.api.get(f"/api/v1/applications/{application_id}/events").json()["items"]
    ]
    assert kinds == [
        "run-requested",
        "submitted",
        "driver-running",
        "abort-requested",
        "driver-exited",
        "aborted",
    ]


def test_reports_become_progress_and_metrics(stage: Stage) -> None:
    application_id = running(stage)
    progress = {
        "batchId": 3,
        "inputRowsPerSecond": 12.5,
        "processedRowsPerSecond": 20.0,
        "durationMs": {"triggerExecution": 800},
        "numInputRows": 25,
    }
    events = [{"type": "progress", "sequence": 1, "name": "q", "progress": progress}]
    answer = stage.report(application_id, events)
    assert answer.json() == {"accepted": 1}
    assert stage.report(application_id, events).json() == {"accepted": 0}  # sent twice
    metrics = stage.api.get(f"/api/v1/applications/{application_id}/metrics").json()
    assert metrics["latest"]["inputRowsPerSecond"] == 12.5
    assert metrics["latest"]["batchId"] == 3
    items = stage.api.get(f"/api/v1/applications/{application_id}/progress").json()["items"]
    assert [item["type"] for item in items] == ["heartbeat", "progress"]
    template = stage.api.get(f"/api/v1/applications/{application_id}/template").json()
    assert template["metadata"]["name"] == "ticks"
    assert template["spec"]["pipeline"]["streaming"]["checkpointLocation"]


def test_reports_need_the_applications_own_token(stage: Stage) -> None:
    application_id = running(stage)
    url = f"{stage.url}/api/v1/applications/{application_id}/reports"
    problem_of(httpx.post(url, json={"events": []}), 401)
    wrong = {"Authorization": f"Bearer {stage.api.headers['authorization'].split()[1]}"}
    problem_of(httpx.post(url, json={"events": []}, headers=wrong), 401)
    bad = stage.report(application_id, [{"type": "progress"}])
    assert problem_of(bad, 422)["errors"][0]["path"] == "events[0].sequence"


def test_logs_by_tail_range_and_download(stage: Stage) -> None:
    application_id = running(stage)
    log = Path(stage.launcher.drivers[-1].handle.directory) / "stderr.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    path = f"/api/v1/applications/{application_id}/logs"
    tail = stage.api.get(path, params={"tail": 3}).json()
    assert tail["text"] == "line 97\nline 98\nline 99\n"
    assert tail["instances"] == {"driver": log.stat().st_size}
    piece = stage.api.get(path, params={"start": 0, "end": 7}).json()
    assert piece["text"] == "line 0\n"
    assert (piece["start"], piece["end"]) == (0, 7)
    whole = stage.api.get(f"{path}/download")
    assert whole.text == log.read_text()
    assert problem_of(stage.api.get(path, params={"instance": "executor-9"}), 404)
    assert problem_of(stage.api.get(path, params={"tail": 0}), 422)
    problem_of(stage.api.get(path, params={"attempt": 7}), 404)
