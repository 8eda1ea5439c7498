"""When the supervisor asks a driver's Spark REST API about its executors: a pipeline's runner,
which reports, is left alone while it starts (its first report makes it RUNNING) and is asked
once its first micro-batch is committed, or when it has not got that far after a grace time."""

from __future__ import annotations

from streamjobs.domain.states import AppState
from streamjobs.launch.base import DriverHandle
from streamjobs.launch.spark_ui import ExecutorFigures
from streamjobs.supervisor.executors import (
    EXECUTOR_POLL_SECONDS,
    REPORT_GRACE_SECONDS,
    ExecutorPolls,
)
from tests.supervisor.conftest import ALICE, World

FIGURES = ExecutorFigures(spark_application_id="local-1", executors=(), running_executors=0)
PROGRESS = {"batchId": 0, "numInputRows": 0, "timestamp": "2026-01-01T00:00:00.000Z"}


class Reader:
    """Answers for every driver, and counts the questions."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, handle: DriverHandle) -> ExecutorFigures:
        self.asked += 1
        return FIGURES


def with_reader(world: World) -> Reader:
    reader = Reader()
    world.supervisor._observer._executor_polls = ExecutorPolls(reader)
    return reader


def test_a_starting_runner_is_not_asked_until_its_first_batch_is_committed(world: World) -> None:
    reader = with_reader(world)
    application = world.services.applications.run(world.create_job(), actor=ALICE)
    world.tick()
    world.tick(1)
    assert reader.asked == 0
    assert world.app(application.id).state is AppState.STARTING
    world.report(application.id, {"type": "driver", "sparkApplicationId": "local-1"})
    world.tick(1)
    assert world.app(application.id).state is AppState.RUNNING
    world.tick(EXECUTOR_POLL_SECONDS)
    assert reader.asked == 0
    world.report(application.id, {"type": "progress", "name": "ticks", "progress": PROGRESS})
    world.tick(1)
    assert reader.asked == 1
    assert world.app(application.id).spark_app_id == "local-1"
    world.tick(1)
    assert reader.asked == 1
    world.tick(EXECUTOR_POLL_SECONDS)
    assert reader.asked == 2


def test_a_runner_that_never_reports_is_asked_after_the_grace_time(world: World) -> None:
    reader = with_reader(world)
    application = world.services.applications.run(world.create_job(), actor=ALICE)
    world.tick()
    world.tick(REPORT_GRACE_SECONDS - 1)
    assert reader.asked == 0
    world.tick(1)
    assert reader.asked == 1
    assert world.app(application.id).state is AppState.RUNNING


def test_the_grace_of_a_driver_holding_its_queries_starts_when_the_hold_ends(world: World) -> None:
    reader = with_reader(world)
    name = world.create_job(restartPolicy={"type": "Always", "onFailureRetryInterval": 15})
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "driver"})
    world.tick(1)
    world.launcher.exit(-1, 137)
    world.tick()
    world.tick()  # submitted at once, holding its queries for 15 s
    assert world.launcher.drivers[-1].attempt.hold_until is not None
    world.tick(15 + REPORT_GRACE_SECONDS - 1)
    assert reader.asked == 0
    assert world.app(application.id).state is AppState.STARTING
    world.tick(1)
    assert reader.asked == 1
    assert world.app(application.id).state is AppState.RUNNING
