"""A job with a standby driver (``spec.instance.standby``): held ready while the application runs,
promoted when the active driver dies, replaced when it dies itself, ended with the application,
and re-attached by a restarted server; over a real store of each backend, a fake launcher and a
fake clock."""

from __future__ import annotations

import pytest

from streamjobs.domain.states import AppState
from streamjobs.launch.fake import FakeDriver
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import started

STANDBY = {"deployment": "singleNode", "standby": True}
ALWAYS = {"type": "Always", "onFailureRetryInterval": 5}


def standbys(world: World) -> list[FakeDriver]:
    return [driver for driver in world.launcher.drivers if driver.attempt.standby]


def with_ready_standby(world: World, **spec: object) -> str:
    """A RUNNING application whose standby (the second driver) is held ready."""
    application_id = started(world, **{"instance": STANDBY, "restartPolicy": ALWAYS, **spec})
    world.tick()
    (standby,) = standbys(world)
    standby.ready = True
    world.tick()
    return application_id


def test_a_standby_starts_once_the_application_runs_and_is_seen_ready(world: World) -> None:
    name = world.create_job(instance=STANDBY)
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.tick()
    assert standbys(world) == []  # not while the first driver starts
    world.report(application.id, {"type": "driver"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    world.tick()
    (standby,) = standbys(world)
    assert (standby.attempt.attempt, standby.attempt.hold_until) == (2, None)
    assert standby.attempt.report_token != world.launcher.drivers[0].attempt.report_token
    world.tick()
    assert len(world.launcher.drivers) == 2  # one standby at a time
    standby.ready = True
    world.tick()
    assert world.events(application.id)[-2:] == ["standby-started", "standby-ready"]
    with world.services.store.reading() as repos:
        held = repos.applications.standby_attempt(application.id)
        latest = repos.applications.latest_attempt(application.id)
    assert held is not None
    assert held.running_at == world.clock.now()
    assert latest is not None
    assert latest.number == 1


def test_the_standby_is_promoted_when_the_active_driver_dies(world: World) -> None:
    application_id = with_ready_standby(world)
    world.clock.advance(30)
    world.launcher.exit(0, 137)
    world.tick()
    assert world.app(application_id).state is AppState.PENDING_RERUN
    due = world.app(application_id).next_attempt_at
    world.tick()
    (standby,) = standbys(world)
    assert standby.promotions == [due]  # the retry interval is kept
    assert len(world.launcher.drivers) == 2  # no cold driver submitted
    app = world.app(application_id)
    assert (app.state, app.restarts) == (AppState.STARTING, 1)
    assert world.events(application_id)[-1] == "standby-promoted"
    world.report(application_id, {"type": "heartbeat"})  # with the standby's own token
    world.tick()
    assert world.app(application_id).state is AppState.RUNNING
    with world.services.store.reading() as repos:
        latest = repos.applications.latest_attempt(application_id)
    assert latest is not None
    assert (latest.number, latest.promoted_at is not None) == (2, True)
    world.tick()
    assert [driver.attempt.attempt for driver in standbys(world)] == [2, 3]  # a new one behind


def test_the_promoted_standby_is_not_running_on_its_predecessors_reports(world: World) -> None:
    application_id = with_ready_standby(world)
    active_token = world.launcher.drivers[0].attempt.report_token
    assert active_token is not None
    last_report = [{"sequence": 0, "type": "heartbeat"}]  # the dying driver's last report
    world.services.reports.receive(application_id, active_token, last_report)
    world.clock.advance(1)
    world.launcher.exit(0, 137)
    world.tick()
    world.tick()
    world.tick(1)
    assert world.app(application_id).state is AppState.STARTING


def test_a_standby_that_dies_is_replaced_after_the_retry_interval(world: World) -> None:
    application_id = with_ready_standby(world)
    world.launcher.exit(1, 1)
    world.tick()
    assert "standby-ended" in world.events(application_id)
    world.tick(5)
    assert len(standbys(world)) == 1  # standby_retry_seconds (10) not yet over
    world.tick(5)
    assert [driver.attempt.attempt for driver in standbys(world)] == [2, 3]
    world.launcher.exit(0, 137)  # the active dies while the new one still starts: promoted
    world.tick()
    world.tick()
    assert standbys(world)[-1].calls == ["promote"]


def test_without_a_live_standby_a_cold_driver_is_submitted(world: World) -> None:
    application_id = with_ready_standby(world)
    world.launcher.exit(1, 1)
    world.tick()
    world.launcher.exit(0, 137)
    world.tick()
    world.tick(5)
    assert world.app(application_id).state is AppState.STARTING
    assert not world.launcher.drivers[-1].attempt.standby
    assert world.launcher.drivers[-1].attempt.attempt == 3


@pytest.mark.parametrize("request_name", ["stop", "abort"])
def test_stop_and_abort_end_both_drivers(world: World, request_name: str) -> None:
    application_id = with_ready_standby(world)
    if request_name == "stop":
        world.services.applications.stop("ticks", actor=ALICE)
    else:
        world.services.applications.abort(application_id, actor=ALICE)
    world.tick()
    active, standby = world.launcher.drivers
    assert standby.calls == ["kill"]
    assert not standby.running
    assert active.calls == ["stop" if request_name == "stop" else "abort"]
    world.tick()
    expected = AppState.STOPPED if request_name == "stop" else AppState.ABORTED
    assert world.app(application_id).state is expected
    with world.services.store.reading() as repos:
        held = repos.applications.standby_attempt(application_id)
    assert held is not None
    assert held.ended_at is not None


def test_a_failed_application_ends_its_standby(world: World) -> None:
    application_id = with_ready_standby(world, restartPolicy={"type": "Never"})
    world.launcher.exit(0, 1)
    world.tick()
    assert world.app(application_id).state is AppState.FAILED
    assert standbys(world)[0].calls == ["kill"]


def test_a_restarted_server_re_attaches_to_both_drivers(world: World) -> None:
    application_id = with_ready_standby(world)
    settings = world.services.settings
    world.supervisor = Supervisor(  # a new server process: it knows only what the store says
        store=world.services.store,
        launchers=dict.fromkeys(world.services.launchers, world.launcher),
        attempts=AttemptFactory(
            store=world.services.store,
            apps_directory=settings.apps_directory,
            public_url="http://127.0.0.1:1",
            secrets=world.services.secrets,
        ),
        clock=world.clock,
        config=SupervisorConfig(timing=Timing(heartbeat_timeout=60)),
        executor_reader=lambda handle: None,
    )
    world.tick()
    assert len(world.launcher.drivers) == 2  # neither a second active nor a second standby
    world.launcher.exit(0, 137)
    world.tick()
    due = world.app(application_id).next_attempt_at
    world.tick()
    assert standbys(world)[0].promotions == [due]
    assert len(world.launcher.drivers) == 2


def test_a_standby_recorded_by_a_server_that_stopped_before_its_pid_is_adopted(
    world: World,
) -> None:
    application_id = with_ready_standby(world)
    (standby,) = standbys(world)
    with world.services.store.transaction() as repos:
        repos.applications.update_attempt(application_id, 2, pid=None)
    world.tick()
    with world.services.store.reading() as repos:
        held = repos.applications.standby_attempt(application_id)
    assert held is not None
    assert (held.pid, held.ended_at) == (standby.handle.pid, None)
    assert "driver-recovered" not in world.events(application_id)
    assert len(world.launcher.drivers) == 2
