"""Snapshots, Suspend and Run from a snapshot over HTTP, against a real server whose drivers are
fake and whose supervisor the test ticks; the test stages each snapshot in the attempt directory
as the runner would, and the tick collects it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from streamjobs.domain.access import BundleGrant, Permission, Subject
from streamjobs.domain.snapshots import SnapshotKind, automatic_name
from tests.api.problems import error_paths, problem_of
from tests.factories import changed, pipeline_manifest, python_manifest
from tests.staged_server import Stage, stage
from tests.staged_snapshots import (
    ADMIN,
    OUTPUT,
    job,
    output_directory,
    run_until_running,
    stage_snapshot,
)

__all__ = ["job", "stage"]

pytestmark = pytest.mark.snapshots


def snapshots(job: str) -> str:
    return f"/api/v1/jobs/{job}/snapshots"


def ready_snapshot(stage: Stage, job: str, name: str, *, batch: int = 1) -> dict[str, object]:
    """Ask for the snapshot ``name`` of the running job, stage it and let the supervisor collect
    it; the snapshot, READY."""
    taken = stage.api.post(snapshots(job), json={"name": name})
    assert taken.status_code == 202, taken.text
    stage.tick()
    stage_snapshot(stage, name, batch=batch)
    stage.tick()
    document: dict[str, object] = stage.api.get(f"{snapshots(job)}/{name}").json()
    assert document["status"] == "READY", document
    return document


def test_take_answers_taking_then_the_tick_collects_it_ready(stage: Stage, job: str) -> None:
    application_id = run_until_running(stage, job)

    taken = stage.api.post(snapshots(job), json={"name": "before-upgrade"})

    assert taken.status_code == 202, taken.text
    assert taken.headers["location"] == f"{snapshots(job)}/before-upgrade"
    taking = taken.json()
    assert taking["name"] == "before-upgrade"
    assert taking["job"] == job
    assert taking["kind"] == "manual"
    assert taking["status"] == "TAKING"
    assert taking["application"] == application_id
    assert taking["requestedBy"] == "admin"
    assert taking["takenAt"] is None
    assert [item["name"] for item in stage.api.get(snapshots(job)).json()["items"]] == [
        "before-upgrade"
    ]

    stage.tick()
    stage_snapshot(stage, "before-upgrade", batch=4)
    stage.tick()

    ready = stage.api.get(f"{snapshots(job)}/before-upgrade").json()
    assert ready["status"] == "READY", ready
    assert ready["batches"] == {OUTPUT: 4}
    assert ready["sizeBytes"] > 0
    assert ready["takenAt"] is not None
    assert ready["error"] is None
    assert isinstance(ready["specVersion"], int)
    assert ready["positions"] == [
        {
            "output": OUTPUT,
            "format": "parquet",
            "tracked": True,
            "batchId": 4,
            "version": None,
            "txnAppId": None,
            "txnVersion": None,
            "snapshotId": None,
            "batchMarker": None,
            "description": "parquet sink log batch 4",
        }
    ]
    assert stage.api.get(snapshots(job)).json()["items"] == [ready]


def test_a_snapshot_the_runner_could_not_take_is_failed_with_its_reason(
    stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    assert stage.api.post(snapshots(job), json={"name": "doomed"}).status_code == 202
    stage.tick()
    stage_snapshot(stage, "doomed", error="the checkpoint could not be copied: disk full")
    stage.tick()

    failed = stage.api.get(f"{snapshots(job)}/doomed").json()

    assert failed["status"] == "FAILED"
    assert "disk full" in failed["error"]


def test_without_a_body_the_snapshot_gets_a_name_of_its_time(stage: Stage, job: str) -> None:
    run_until_running(stage, job)

    taken = stage.api.post(snapshots(job))

    assert taken.status_code == 202, taken.text
    assert taken.json()["name"] == automatic_name(SnapshotKind.MANUAL, stage.services.clock.now())


def test_take_is_refused_without_a_running_pipeline_with_a_checkpoint(
    stage: Stage, job: str
) -> None:
    assert "running" in problem_of(stage.api.post(snapshots(job), json={}), 409)["detail"]
    problem_of(stage.api.post(snapshots("no-such-job"), json={}), 404)

    stage.api.put("/api/v1/jobs/prog", json=python_manifest("prog")).raise_for_status()
    problem_of(stage.api.post(snapshots("prog"), json={}), 409)

    stateless = changed(pipeline_manifest(job), ("spec.processing", {"guarantee": "NONE"}))
    stage.api.put(f"/api/v1/jobs/{job}", json=stateless).raise_for_status()
    run_until_running(stage, job)
    problem_of(stage.api.post(snapshots(job), json={}), 409)


def test_take_refuses_a_bad_name_a_taken_name_and_unknown_fields(stage: Stage, job: str) -> None:
    run_until_running(stage, job)

    assert error_paths(stage.api.post(snapshots(job), json={"name": "no spaces"})) == ["body.name"]
    assert error_paths(stage.api.post(snapshots(job), json={"name": "x", "kind": "stop"})) == [
        "body.kind"
    ]
    assert stage.api.post(snapshots(job), json={"name": "once"}).status_code == 202
    assert (
        "once" in problem_of(stage.api.post(snapshots(job), json={"name": "once"}), 409)["detail"]
    )


def test_get_and_delete(stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    assert stage.api.post(snapshots(job), json={"name": "busy"}).status_code == 202
    problem_of(stage.api.delete(f"{snapshots(job)}/busy"), 409)
    stage.tick()
    stage_snapshot(stage, "busy")
    stage.tick()

    deleted = stage.api.delete(f"{snapshots(job)}/busy")

    assert deleted.status_code == 204, deleted.text
    problem_of(stage.api.get(f"{snapshots(job)}/busy"), 404)
    problem_of(stage.api.delete(f"{snapshots(job)}/busy"), 404)
    assert stage.api.get(snapshots(job)).json()["items"] == []
    problem_of(stage.api.get(snapshots("no-such-job")), 404)


def test_who_may_read_take_and_delete(stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    ready_snapshot(stage, job, "kept")
    as_role = _people(stage)
    one = f"{snapshots(job)}/kept"

    def answers(role: str, *, delete: bool = False) -> tuple[int, ...]:
        with as_role(role) as api:
            if delete:
                return (api.delete(one).status_code,)
            return (
                api.get(snapshots(job)).status_code,
                api.get(one).status_code,
                api.post(snapshots(job), json={"name": f"by-{role}"}).status_code,
            )

    assert answers("outsider") == (404, 404, 404)
    assert answers("viewer") == (200, 200, 403)
    assert answers("runner") == (200, 200, 202)
    assert answers("editor") == (200, 200, 403)
    assert answers("outsider", delete=True) == (404,)
    assert answers("viewer", delete=True) == (403,)
    assert answers("runner", delete=True) == (403,)
    assert answers("editor", delete=True) == (204,)


def test_suspend_stops_the_application_and_leaves_it_suspended(stage: Stage, job: str) -> None:
    problem_of(stage.api.post(f"/api/v1/jobs/{job}/suspend"), 409)
    problem_of(stage.api.post("/api/v1/jobs/no-such-job/suspend"), 404)
    application_id = run_until_running(stage, job)

    suspending = stage.api.post(f"/api/v1/jobs/{job}/suspend")

    assert suspending.status_code == 202, suspending.text
    assert suspending.json()["id"] == application_id
    assert suspending.json()["state"] == "TERMINATING"
    stage.tick()
    aligned = stage.launcher.drivers[-1].stop_snapshot
    assert aligned is not None
    assert aligned.kind is SnapshotKind.SUSPEND
    stage_snapshot(stage, aligned.name, kind=SnapshotKind.SUSPEND)
    stage.tick()
    assert stage.api.get(f"/api/v1/applications/{application_id}").json()["state"] == "SUSPENDED"
    listed = stage.api.get(snapshots(job)).json()["items"]
    assert [(item["name"], item["kind"], item["status"]) for item in listed] == [
        (aligned.name, "suspend", "READY")
    ]
    problem_of(stage.api.post(f"/api/v1/jobs/{job}/suspend"), 409)
    assert stage.api.post(f"/api/v1/jobs/{job}/resume").status_code == 202


def test_run_from_a_snapshot(stage: Stage, job: str) -> None:
    run_until_running(stage, job)
    ready_snapshot(stage, job, "good", batch=2)
    assert stage.api.post(f"/api/v1/jobs/{job}/stop").status_code == 202
    stage.tick()
    stage.tick()

    problem_of(stage.api.post(f"/api/v1/jobs/{job}/run", json={"fromSnapshot": "nope"}), 404)
    assert error_paths(stage.api.post(f"/api/v1/jobs/{job}/run", json={"fromSnaphot": "good"})) == [
        "body.fromSnaphot"
    ]
    assert error_paths(
        stage.api.post(f"/api/v1/jobs/{job}/run", json={"fromSnapshot": "not a name"})
    ) == ["body.fromSnapshot"]
    assert error_paths(
        stage.api.post(f"/api/v1/jobs/{job}/run", json={"fromSnapshot": "good", "allowReplay": 3})
    ) == ["body.allowReplay"]

    application_id = run_until_running(stage, job, {"fromSnapshot": "good"})

    events = stage.api.get(f"/api/v1/applications/{application_id}/events").json()["items"]
    assert "started-from-snapshot" in [event["kind"] for event in events]


def test_a_start_from_a_snapshot_behind_an_output_needs_allow_replay(
    stage: Stage, job: str
) -> None:
    run_until_running(stage, job)
    ready_snapshot(stage, job, "old", batch=1)
    assert stage.api.post(f"/api/v1/jobs/{job}/stop").status_code == 202
    stage.tick()
    stage.tick()
    _output_at_batch(output_directory(job), 7)

    refused = problem_of(
        stage.api.post(f"/api/v1/jobs/{job}/run", json={"fromSnapshot": "old"}), 409
    )

    assert OUTPUT in refused["detail"]
    assert "batch 7" in refused["detail"]
    run_until_running(stage, job, {"fromSnapshot": "old", "allowReplay": True})


def test_run_with_an_empty_body_or_an_empty_object_runs_as_before(stage: Stage, job: str) -> None:
    first = stage.api.post(f"/api/v1/jobs/{job}/run")
    assert first.status_code == 201, first.text
    assert stage.api.post(f"/api/v1/applications/{first.json()['id']}/abort").status_code == 202
    stage.tick()
    second = stage.api.post(f"/api/v1/jobs/{job}/run", json={})
    assert second.status_code == 201, second.text


def _output_at_batch(directory: Path, batch: int) -> None:
    """Make the parquet output's sink log say it committed batches up to ``batch``."""
    log = directory / "_spark_metadata"
    log.mkdir(parents=True, exist_ok=True)
    for number in range(batch + 1):
        (log / str(number)).write_text('v1\n{"path":"part-0.parquet"}\n')


def _people(stage: Stage) -> Callable[[str], httpx.Client]:
    """A client factory per role on the default bundle: outsider (no grant), viewer (VIEW),
    runner (VIEW, RUN) and editor (UPDATE)."""
    roles: dict[str, list[Permission]] = {
        "outsider": [],
        "viewer": [Permission.VIEW],
        "runner": [Permission.VIEW, Permission.RUN],
        "editor": [Permission.UPDATE],
    }
    services, tokens = stage.services, {}
    for role in roles:
        services.people.create_user(role, actor=ADMIN)
        tokens[role] = services.identity.issue_token(role, "test", actor=ADMIN)
    grants = [
        BundleGrant("default", Subject.parse(f"user:{role}"), permission)
        for role, permissions in roles.items()
        for permission in permissions
    ]
    services.bundles.set_grants("default", grants, actor=ADMIN)

    def as_role(role: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {tokens[role]}"}
        return httpx.Client(base_url=stage.url, headers=headers, timeout=30)

    return as_role
