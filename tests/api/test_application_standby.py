"""An application's standby driver over HTTP: ``standby`` in GET /api/v1/applications/{id}
(starting, ready, none once it ended or the application did), each attempt's ``standby`` and
``promotedAt``, and the OpenAPI document describing both."""

from __future__ import annotations

from typing import Any

from streamjobs.domain.states import AppState
from tests.staged_server import Stage, stage
from tests.standby_attempts import (
    STANDBY_PID,
    add_standby,
    end_attempt,
    promote,
    running_application,
    set_state,
)

__all__ = ["stage"]


def application(stage: Stage, application_id: str) -> dict[str, Any]:
    answer = stage.api.get(f"/api/v1/applications/{application_id}")
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


def test_a_held_ready_standby_is_the_applications_standby_and_one_of_its_attempts(
    stage: Stage,
) -> None:
    application_id = running_application(stage)
    held = add_standby(stage, application_id, ready=True)
    assert held.running_at is not None
    document = application(stage, application_id)
    assert document["standby"] == {
        "attempt": 2,
        "state": "ready",
        "pid": STANDBY_PID,
        "submittedAt": held.submitted_at.isoformat(),
        "readyAt": held.running_at.isoformat(),
    }
    driver, standby = document["attempts"]
    assert (driver["number"], driver["standby"], driver["promotedAt"]) == (1, False, None)
    assert (standby["number"], standby["standby"], standby["promotedAt"]) == (2, True, None)
    assert document["state"] == "RUNNING"


def test_a_starting_standby_has_no_ready_time(stage: Stage) -> None:
    application_id = running_application(stage)
    held = add_standby(stage, application_id, ready=False)
    standby = application(stage, application_id)["standby"]
    assert standby["state"] == "starting"
    assert (standby["attempt"], standby["readyAt"]) == (2, None)
    assert standby["submittedAt"] == held.submitted_at.isoformat()


def test_an_ended_standby_is_history_only(stage: Stage) -> None:
    application_id = running_application(stage)
    add_standby(stage, application_id, ready=True)
    end_attempt(stage, application_id, 2, outcome="discarded")
    document = application(stage, application_id)
    assert document["standby"] is None
    ended = document["attempts"][-1]
    assert (ended["standby"], ended["outcome"], ended["promotedAt"]) == (True, "discarded", None)


def test_an_application_without_standby_or_no_longer_active_shows_none(stage: Stage) -> None:
    application_id = running_application(stage)
    assert application(stage, application_id)["standby"] is None
    add_standby(stage, application_id, ready=True)
    for state in (AppState.SUSPENDED, AppState.FAILED):
        set_state(stage, application_id, state)
        document = application(stage, application_id)
        assert document["state"] == state
        assert document["standby"] is None
        assert document["attempts"][-1]["standby"] is True


def test_a_promoted_standby_is_an_attempt_like_any_other_with_its_promotion(
    stage: Stage,
) -> None:
    application_id = running_application(stage)
    add_standby(stage, application_id, ready=True)
    promoted_at = promote(stage, application_id, 2)
    document = application(stage, application_id)
    assert document["standby"] is None
    died, promoted = document["attempts"]
    assert (died["standby"], died["outcome"]) == (False, "restarted")
    assert (promoted["number"], promoted["standby"]) == (2, True)
    assert promoted["promotedAt"] == promoted_at.isoformat()
    assert promoted["endedAt"] is None


def test_the_openapi_document_describes_the_standby_and_the_attempts(stage: Stage) -> None:
    openapi = stage.api.get("/api/v1/openapi.json").json()
    operation = openapi["paths"]["/api/v1/applications/{application_id}"]["get"]
    reference = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schemas = openapi["components"]["schemas"]
    details = schemas[reference.rsplit("/", 1)[-1]]
    assert {"standby", "attempts", "state", "executors"} <= details["properties"].keys()
    attempt = schemas[details["properties"]["attempts"]["items"]["$ref"].rsplit("/", 1)[-1]]
    assert attempt["properties"]["standby"]["type"] == "boolean"
    assert {"standby", "promotedAt"} <= set(attempt["required"])
    standby_ref = next(
        choice["$ref"] for choice in details["properties"]["standby"]["anyOf"] if "$ref" in choice
    )
    standby = schemas[standby_ref.rsplit("/", 1)[-1]]
    assert set(standby["properties"]) == {"attempt", "state", "pid", "submittedAt", "readyAt"}
    state = schemas[standby["properties"]["state"]["$ref"].rsplit("/", 1)[-1]]
    assert state["enum"] == ["starting", "ready"]
