"""Upgrades over HTTP, against a real server whose drivers are fake and whose supervisor the
test ticks: the check alone (dryRun), an upgrade answered 202 and carried out by the ticks (the
test stages the upgrade snapshot as the runner would), its refusals, and the job's history with
the diff of the two specs.

The compatibility check is the server's own: the fake drivers leave the checkpoint without
state, so only its static rules run (``tests/spark/test_dry_run.py`` runs the Spark part).
"""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.snapshots import SnapshotKind
from tests.api.problems import error_paths, problem_of
from tests.factories import changed, pipeline_manifest
from tests.staged_server import Stage, stage
from tests.staged_snapshots import job, run_until_running, stage_snapshot

__all__ = ["job", "stage"]

pytestmark = pytest.mark.snapshots

SQL = "spec.pipeline.steps[0].sequence[0].sql"
FILTERED = "SELECT * FROM ticks WHERE value % 2 = 0"


def configure(stage: Stage, job: str, *changes: tuple[str, Any]) -> None:
    answer = stage.api.put(f"/api/v1/jobs/{job}", json=changed(pipeline_manifest(job), *changes))
    assert answer.status_code == 200, answer.text


def upgrade(stage: Stage, job: str, **options: Any) -> Any:
    return stage.api.post(f"/api/v1/jobs/{job}/upgrade", **options)


def test_a_dry_run_answers_the_check_and_stops_nothing(stage: Stage, job: str) -> None:
    application_id = run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED))

    checked = upgrade(stage, job, params={"dryRun": "true"})

    assert checked.status_code == 200, checked.text
    report = checked.json()
    assert (report["mode"], report["compatible"], report["refusals"]) == ("last-state", True, [])
    assert "dryRun" in report
    stage.tick()
    state = stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "RUNNING"
    assert stage.api.get(f"/api/v1/jobs/{job}/upgrades").json() == {"items": []}


def test_an_upgrade_answers_202_and_the_ticks_carry_it_out(stage: Stage, job: str) -> None:
    old = run_until_running(stage, job)
    configure(stage, job, (SQL, FILTERED))
    status = stage.api.get(f"/api/v1/jobs/{job}").json()["status"]
    assert status["changedSinceRunning"] is True
    assert status["application"]["jobVersion"] == 1

    asked = upgrade(stage, job, json={"mode": "snapshot"})

    assert asked.status_code == 202, asked.text
    document = asked.json()
    assert asked.headers["location"] == f"/api/v1/jobs/{job}/upgrades/{document['id']}"
    assert (document["status"], document["mode"]) == ("STOPPING", "snapshot")
    assert (document["fromVersion"], document["toVersion"]) == (1, 2)
    assert document["fromApplication"] == old
    assert document["snapshot"].startswith("upgrade-")
    stage.tick()
    stage_snapshot(stage, document["snapshot"], kind=SnapshotKind.UPGRADE, batch=2)
    stage.tick()
    started = stage.api.get(asked.headers["location"]).json()
    assert started["status"] == "STARTING"
    new = started["toApplication"]
    assert new not in (None, old)
    stage.tick()
    assert stage.report(new, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    assert stage.api.get(asked.headers["location"]).json()["status"] == "WATCHING"
    job_status = stage.api.get(f"/api/v1/jobs/{job}").json()["status"]
    assert job_status["changedSinceRunning"] is False
    assert job_status["application"]["id"] == new

    history = stage.api.get(f"/api/v1/jobs/{job}/upgrades").json()["items"]
    assert [item["id"] for item in history] == [document["id"]]
    diff = history[0]["diff"].splitlines()
    assert diff[:2] == ["--- job version 1", "+++ job version 2"]
    assert "-        sql: SELECT * FROM ticks" in diff
    assert f"+        sql: {FILTERED}" in diff


@pytest.mark.parametrize(
    ("setup", "refusal"),
    [
        ("never-run", "nothing to upgrade"),
        ("unchanged", "nothing to upgrade"),
        ("in-progress", "has an upgrade in progress"),
    ],
)
def test_nothing_to_upgrade_and_an_upgrade_in_progress_are_conflicts(
    stage: Stage, job: str, setup: str, refusal: str
) -> None:
    if setup != "never-run":
        run_until_running(stage, job)
    if setup == "in-progress":
        configure(stage, job, (SQL, FILTERED))
        assert upgrade(stage, job).status_code == 202
        configure(stage, job, (SQL, "SELECT * FROM ticks WHERE value > 1"))

    refused = problem_of(upgrade(stage, job), 409)

    assert refusal in refused["detail"]


def test_an_incompatible_spec_is_a_conflict_naming_each_reason(stage: Stage, job: str) -> None:
    application_id = run_until_running(stage, job)
    configure(stage, job, ("spec.pipeline.outputs[0].path", f"/tmp/out/{job}/elsewhere"))

    refused = upgrade(stage, job, params={"mode": "last-state"})

    assert error_paths(refused, 409) == ["spec.pipeline.outputs[0].path"]
    checked = upgrade(stage, job, params={"dryRun": "true"}).json()
    assert checked["compatible"] is False
    assert [item["path"] for item in checked["refusals"]] == ["spec.pipeline.outputs[0].path"]
    stage.tick()
    state = stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "RUNNING"
    assert upgrade(stage, job, json={"mode": "stateless"}).status_code == 202


def test_bad_modes_are_invalid_input(stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    assert error_paths(upgrade(stage, job, json={"mode": "savepoint"})) == ["body.mode"]
    mixed = upgrade(stage, job, params={"mode": "stateless"}, json={"mode": "snapshot"})
    assert error_paths(mixed) == ["query.mode"]


def test_an_unknown_upgrade_is_not_found(stage: Stage, job: str) -> None:
    problem_of(stage.api.get(f"/api/v1/jobs/{job}/upgrades/upg-000000000000"), 404)
    problem_of(stage.api.get("/api/v1/jobs/no-such-job/upgrades"), 404)
