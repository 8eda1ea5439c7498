"""A pipeline restarted after an attempt that ran: its driver starts during the retry interval and
holds its queries until the interval ends (``restart_lead``), over a real store and a fake clock."""

from __future__ import annotations

from datetime import timedelta

from streamjobs.domain.states import AppState
from tests.factories import python_manifest
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import started

LONG_INTERVAL = {"type": "Always", "onFailureRetryInterval": 60}


def test_a_restart_due_later_than_the_lead_is_submitted_the_lead_before_it(world: World) -> None:
    application_id = started(world, restartPolicy=LONG_INTERVAL)
    world.launcher.exit(-1, 137)
    world.tick()
    due = world.app(application_id).next_attempt_at
    assert due == world.clock.now() + timedelta(seconds=60)
    world.tick(39)
    assert len(world.launcher.drivers) == 1
    assert world.app(application_id).state is AppState.PENDING_RERUN
    world.tick(1)  # 20 s (the default lead) before the restart is due
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.hold_until == due
    submitted = world.services.applications.events(application_id, actor=ALICE)[-1]
    assert submitted.kind == "submitted"
    assert submitted.message == (
        f"attempt 2 submitted; its queries start at {due:%H:%M:%S} UTC, "
        "when the retry interval ends"
    )


def test_a_held_driver_is_starting_until_it_reports_then_running(world: World) -> None:
    application_id = started(world, restartPolicy={"type": "Always", "onFailureRetryInterval": 5})
    world.launcher.exit(-1, 137)
    world.tick(1)  # later than the last report of the attempt that died
    due = world.app(application_id).next_attempt_at
    world.tick()
    assert world.launcher.drivers[-1].attempt.hold_until == due
    held = world.app(application_id)
    assert (held.state, held.next_attempt_at) == (AppState.STARTING, due)
    world.tick(5)
    assert world.app(application_id).state is AppState.STARTING
    world.report(application_id, {"type": "driver"})
    world.tick()
    app = world.app(application_id)
    assert (app.state, app.next_attempt_at) == (AppState.RUNNING, None)
    assert (app.restarts, app.execution_attempts) == (1, 2)


def test_a_held_driver_can_be_stopped_before_its_queries_start(world: World) -> None:
    application_id = started(world, restartPolicy={"type": "Always", "onFailureRetryInterval": 5})
    world.launcher.exit(-1, 137)
    world.tick()
    world.tick()
    assert world.launcher.drivers[-1].attempt.hold_until is not None
    world.services.applications.stop("ticks", actor=ALICE)
    world.tick()
    assert world.launcher.drivers[-1].calls == ["stop"]
    world.tick()
    assert world.app(application_id).state is AppState.STOPPED


def test_after_a_failure_to_start_the_whole_interval_passes_first(world: World) -> None:
    name = world.create_job(
        restartPolicy={
            "type": "OnFailure",
            "onSubmissionFailureRetries": 1,
            "onSubmissionFailureRetryInterval": 5,
        }
    )
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.launcher.exit(-1, 1)  # before any report: it failed to start
    world.tick()
    assert world.app(application.id).state is AppState.PENDING_RERUN
    world.tick(4)
    assert len(world.launcher.drivers) == 1
    world.tick(1)
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.hold_until is None


def test_a_program_that_cannot_hold_its_queries_waits_the_whole_interval(world: World) -> None:
    manifest = python_manifest("program")
    manifest["spec"]["restartPolicy"] = {"type": "Always", "onFailureRetryInterval": 5}
    world.services.jobs.create(manifest, actor=ALICE)
    application = world.services.applications.run("program", actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    world.launcher.exit(-1, 137)
    world.tick()
    world.tick(4)
    assert len(world.launcher.drivers) == 1
    world.tick(1)
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.hold_until is None


def test_a_held_driver_that_fails_to_start_is_retried_after_the_whole_interval(
    world: World,
) -> None:
    application_id = started(world, restartPolicy={"type": "Always", "onFailureRetryInterval": 5})
    world.launcher.exit(-1, 137)
    world.tick(1)  # later than the last report of the attempt that died
    world.launcher.refuse_submissions("spark-submit not found")
    world.tick()  # submitted the lead early and refused: it never ran
    world.tick(1)
    app = world.app(application_id)
    assert app.state is AppState.PENDING_RERUN
    assert app.next_attempt_at == world.clock.now() + timedelta(seconds=5)
    world.tick(4)
    assert len(world.launcher.drivers) == 1
    world.tick(1)
    assert len(world.launcher.drivers) == 2
    assert world.launcher.drivers[-1].attempt.hold_until is None
