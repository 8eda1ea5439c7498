"""The supervisor loop over a real store, with the fake launcher and a fake clock: every path of
an application from Run to its end, as the tick and the restart policy decide."""

from __future__ import annotations

import pytest

from streamjobs.domain.errors import Conflict
from streamjobs.domain.states import AppState
from tests.supervisor.conftest import ALICE, World

ON_FAILURE_TWICE = {
    "type": "OnFailure",
    "onFailureRetries": 2,
    "onFailureRetryInterval": 10,
    "onSubmissionFailureRetries": 1,
    "onSubmissionFailureRetryInterval": 3,
}


def started(world: World, **spec: object) -> str:
    """Run a new job and bring its application to RUNNING."""
    name = world.create_job(**spec)
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "driver", "sparkApplicationId": "local-1"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    return application.id


def test_run_submits_one_driver_which_becomes_running(world: World) -> None:
    name = world.create_job()
    application = world.services.applications.run(name, actor=ALICE)
    assert application.state is AppState.STARTING
    world.tick()
    assert len(world.launcher.drivers) == 1
    assert world.launcher.drivers[0].attempt.attempt == 1
    world.tick()
    assert world.app(application.id).state is AppState.STARTING  # no report yet
    world.report(application.id, {"type": "heartbeat"})
    world.tick()
    app = world.app(application.id)
    assert app.state is AppState.RUNNING
    assert (app.submission_attempts, app.execution_attempts) == (1, 1)
    assert world.services.jobs.get(name, actor=ALICE).status == "RUNNING"
    assert len(world.launcher.drivers) == 1
    assert world.events(application.id) == ["run-requested", "submitted", "driver-running"]


def test_a_second_run_is_a_conflict_naming_the_live_application(world: World) -> None:
    application_id = started(world)
    with pytest.raises(Conflict, match=world.app(application_id).name):
        world.services.applications.run("ticks", actor=ALICE)


def test_a_finite_job_completes_and_a_new_run_may_start(world: World) -> None:
    application_id = started(world)
    world.launcher.exit(-1, 0)
    world.tick()
    assert world.app(application_id).state is AppState.COMPLETED
    again = world.services.applications.run("ticks", actor=ALICE)
    assert again.name == "ticks-2"


def test_on_failure_retries_twice_then_fails_after_three_execution_attempts(world: World) -> None:
    application_id = started(world, restartPolicy=ON_FAILURE_TWICE)
    for retry in (1, 2):
        world.launcher.exit(-1, 1)
        world.tick()
        app = world.app(application_id)
        assert app.state is AppState.PENDING_RERUN
        world.tick()  # the pipeline's next driver starts during the interval
        assert len(world.launcher.drivers) == retry + 1
        assert world.launcher.drivers[-1].attempt.hold_until == app.next_attempt_at
        assert world.app(application_id).state is AppState.STARTING
        world.tick(10)
        world.report(application_id, {"type": "heartbeat"})
        world.tick()
        assert world.app(application_id).state is AppState.RUNNING
    world.launcher.exit(-1, 1)
    world.tick()
    app = world.app(application_id)
    assert app.state is AppState.FAILED
    assert (app.execution_attempts, app.restarts, app.exit_code) == (3, 2, 1)
    assert app.error_message == "the driver failed (exit code 1)"
    assert world.services.jobs.get("ticks", actor=ALICE).status == "FAILED"
    assert world.events(application_id).count("restarting") == 2


def test_submission_failures_use_their_own_retries(world: World) -> None:
    name = world.create_job(restartPolicy=ON_FAILURE_TWICE)
    world.launcher.refuse_submissions("spark-submit not found", "spark-submit not found")
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()  # submit: refused
    world.tick()  # judged: 1 retry left
    assert world.app(application.id).state is AppState.PENDING_RERUN
    world.tick(3)  # second submit: refused
    world.tick()
    app = world.app(application.id)
    assert app.state is AppState.FAILED
    assert app.error_message == "spark-submit not found"
    assert app.submission_attempts == 2
    assert app.execution_attempts == 0


def test_spent_retries_suspend_and_resume_continues_with_the_edited_job(world: World) -> None:
    application_id = started(world, processing={"suspendOnFailure": True})
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.SUSPENDED
    with pytest.raises(Conflict, match="ticks-1"):
        world.services.applications.run("ticks", actor=ALICE)
    world.services.jobs.update(
        "ticks", {"metadata": {"description": "fixed"}}, actor=ALICE, expected_version=None
    )
    resumed = world.services.applications.resume("ticks", actor=ALICE)
    assert resumed.state is AppState.STARTING
    assert (
        world.services.applications.template(resumed.id, actor=ALICE)["metadata"]["description"]
        == "fixed"
    )
    world.tick()
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.attempt == 2


def test_always_restarts_a_killed_driver(world: World) -> None:
    application_id = started(world, restartPolicy={"type": "Always", "onFailureRetryInterval": 1})
    world.launcher.exit(-1, 137)
    world.tick()
    world.tick(1)
    assert len(world.launcher.drivers) == 2
    assert world.app(application_id).restarts == 1


def test_stop_asks_the_driver_and_ends_stopped(world: World) -> None:
    application_id = started(world)
    stopping = world.services.applications.stop("ticks", actor=ALICE)
    assert stopping.state is AppState.TERMINATING
    world.tick()
    assert world.launcher.drivers[-1].calls == ["stop"]
    world.tick()
    app = world.app(application_id)
    assert app.state is AppState.STOPPED
    assert app.exit_code == 0


def test_abort_ends_aborted_and_a_terminal_application_cannot_be_aborted(world: World) -> None:
    application_id = started(world)
    world.services.applications.abort(application_id, actor=ALICE)
    world.tick()
    world.tick()
    assert world.app(application_id).state is AppState.ABORTED
    assert world.launcher.drivers[-1].calls == ["abort"]
    with pytest.raises(Conflict, match="cannot take an abort"):
        world.services.applications.abort(application_id, actor=ALICE)


def test_a_silent_driver_is_killed_and_judged_by_the_policy(world: World) -> None:
    application_id = started(world, restartPolicy={"type": "OnFailure", "onFailureRetries": 1})
    world.tick(61)
    assert world.launcher.drivers[-1].calls == ["kill"]
    world.tick()
    assert world.app(application_id).state is AppState.PENDING_RERUN
    assert "driver-silent" in world.events(application_id)


def test_progress_reports_become_the_latest_figures(world: World) -> None:
    application_id = started(world)
    progress = {
        "batchId": 4,
        "numInputRows": 100,
        "inputRowsPerSecond": 50.0,
        "processedRowsPerSecond": 80.0,
        "durationMs": {"triggerExecution": 1200},
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sources": [{"metrics": {"maxOffsetsBehindLatest": "7"}}],
    }
    world.report(application_id, {"type": "progress", "name": "ticks/evens", "progress": progress})
    app = world.app(application_id)
    assert app.latest["inputRowsPerSecond"] == 50.0
    assert app.latest["offsetsBehindLatest"] == 7
    assert app.latest["batchDurationMs"] == 1200
    assert "first-batch-committed" in world.events(application_id)


def test_a_report_with_another_token_is_refused(world: World) -> None:
    from streamjobs.domain.errors import Unauthenticated

    application_id = started(world)
    with pytest.raises(Unauthenticated):
        world.services.reports.receive(application_id, "not-the-token", [])


def test_the_driver_gets_only_the_secrets_its_job_names(world: World) -> None:
    started(world, configuration={"envSecrets": {"API_KEY": "api-key"}})
    assert world.launcher.drivers[-1].attempt.secrets == {"API_KEY": "s3cret"}


def test_editing_the_job_does_not_change_a_running_application(world: World) -> None:
    application_id = started(world)
    world.services.jobs.update(
        "ticks", {"metadata": {"description": "later"}}, actor=ALICE, expected_version=None
    )
    template = world.services.applications.template(application_id, actor=ALICE)
    assert template["metadata"].get("description") is None


def test_a_job_with_a_live_application_cannot_be_deleted(world: World) -> None:
    application_id = started(world)
    with pytest.raises(Conflict, match="stop or abort it first"):
        world.services.jobs.delete("ticks", actor=ALICE)
    world.services.applications.abort(application_id, actor=ALICE)
    world.tick()
    world.tick()
    world.services.jobs.delete("ticks", actor=ALICE)
    assert world.app(application_id).state is AppState.ABORTED  # kept as history


def test_a_driver_that_reported_and_died_between_ticks_counts_as_an_execution(
    world: World,
) -> None:
    name = world.create_job(restartPolicy=ON_FAILURE_TWICE)
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "driver"})
    world.launcher.exit(-1, 1)
    world.tick()
    app = world.app(application.id)
    assert app.state is AppState.PENDING_RERUN
    assert (app.execution_attempts, app.execution_failures, app.submission_failures) == (1, 1, 0)
