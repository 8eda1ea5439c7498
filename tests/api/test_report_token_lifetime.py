"""A driver's report token works while its application lives and stops working once the
application ends (issue 19: "its own report token, which stops working when its application
ends"), over HTTP against a real server with the fake launcher."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.api.problems import problem_of
from tests.staged_server import Stage, stage

__all__ = ["stage"]

HEARTBEAT = [{"type": "heartbeat", "sequence": 7}]


def running(stage: Stage) -> str:
    started = stage.api.post("/api/v1/jobs/ticks/run")
    assert started.status_code == 201, started.text
    application_id: str = started.json()["id"]
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    assert state_of(stage, application_id) == "RUNNING"
    return application_id


def state_of(stage: Stage, application_id: str) -> str:
    state: str = stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    return state


def stop(stage: Stage, application_id: str) -> None:
    assert stage.api.post("/api/v1/jobs/ticks/stop").status_code == 202


def abort(stage: Stage, application_id: str) -> None:
    assert stage.api.post(f"/api/v1/applications/{application_id}/abort").status_code == 202


def complete(stage: Stage, application_id: str) -> None:
    stage.launcher.exit(-1, 0)


@pytest.mark.parametrize(
    ("end", "ended_state"),
    [(stop, "STOPPED"), (abort, "ABORTED"), (complete, "COMPLETED")],
)
def test_a_report_token_is_refused_once_its_application_has_ended(
    stage: Stage, end: Callable[[Stage, str], None], ended_state: str
) -> None:
    application_id = running(stage)
    assert stage.report(application_id, HEARTBEAT).json() == {"accepted": 1}
    end(stage, application_id)
    stage.tick()
    stage.tick()
    assert state_of(stage, application_id) == ended_state
    refused = problem_of(stage.report(application_id, HEARTBEAT), 401)
    assert "report token" in refused["detail"]


def test_an_ended_applications_token_opens_neither_it_nor_the_jobs_next_application(
    stage: Stage,
) -> None:
    first = running(stage)
    old_token = stage.launcher.drivers[-1].attempt.report_token
    assert old_token is not None
    stop(stage, first)
    stage.tick()
    stage.tick()
    second = running(stage)
    assert stage.report(second, HEARTBEAT).is_success
    problem_of(report_with(stage, first, old_token), 401)
    problem_of(report_with(stage, second, old_token), 401)


def report_with(stage: Stage, application_id: str, token: str) -> httpx.Response:
    return httpx.post(
        f"{stage.url}/api/v1/applications/{application_id}/reports",
        json={"events": HEARTBEAT},
        headers={"Authorization": f"Bearer {token}"},
    )
