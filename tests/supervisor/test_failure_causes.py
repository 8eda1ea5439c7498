"""The loop over a real store with fake drivers: a failed attempt's cause comes from the end of
its driver's logs into the application's ``error`` and its events; a submission that started no
driver says so; Always bounds failures to start, which back off; each decision is a console
line."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from streamjobs.domain.states import AppState
from streamjobs.supervisor.attempt_facts import LOG_TAIL_BYTES
from tests.supervisor.conftest import ALICE, World

UNRESOLVED = (
    ":: USE VERBOSE OR DEBUG MESSAGE LEVEL FOR MORE DETAILS\n"
    'Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: '
    "org.example#no-such_2.13;9.9.9: not found]\n"
    "\tat org.apache.spark.util.MavenUtils$.resolveMavenCoordinates(MavenUtils.scala:539)\n"
)


def run(world: World, name: str, **spec: object) -> str:
    world.create_job(name, **spec)
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    return application.id


def write_log(world: World, file: str, text: str) -> None:
    directory = Path(world.launcher.drivers[-1].handle.directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / file).write_text(text)


def messages(world: World, application_id: str) -> list[str]:
    return [e.message for e in world.services.applications.events(application_id, actor=ALICE)]


def test_the_cause_in_the_drivers_stderr_becomes_the_error(world: World) -> None:
    application_id = run(world, "needs-a-package")
    write_log(world, "stderr.log", UNRESOLVED)
    world.launcher.exit(-1, 1)
    world.tick()
    world.tick()
    application = world.app(application_id)
    assert application.state is AppState.FAILED
    assert application.error_message == (
        "unresolved dependency org.example:no-such_2.13:9.9.9: not found"
    )
    assert messages(world, application_id)[-1] == (
        "driver exited with code 1: unresolved dependency org.example:no-such_2.13:9.9.9: "
        "not found; failed to start; no retries"
    )


def test_only_the_end_of_a_long_log_is_read(world: World) -> None:
    application_id = run(world, "chatty")
    early = "Traceback (most recent call last):\nValueError: long ago\n"
    write_log(world, "stdout.log", early + "x" * (2 * LOG_TAIL_BYTES) + "\n")
    world.launcher.exit(-1, 1)
    world.tick()
    world.tick()
    assert world.app(application_id).error_message == "the driver failed to start (exit code 1)"


def test_a_cause_of_an_earlier_attempt_does_not_stick_to_a_later_one(world: World) -> None:
    policy = {"type": "OnFailure", "onSubmissionFailureRetries": 1}
    application_id = run(world, "flaky", restartPolicy=policy)
    write_log(world, "stdout.log", "Traceback (most recent call last):\nKeyError: 'x'\n")
    world.launcher.exit(-1, 1)
    world.tick()
    world.tick()
    assert world.app(application_id).error_message == "KeyError: 'x'"
    world.tick(5)
    world.tick()
    assert len(world.launcher.drivers) == 2
    world.launcher.exit(-1, 137)
    world.tick()
    world.tick()
    application = world.app(application_id)
    assert application.state is AppState.FAILED
    assert application.error_message == "the driver failed to start (exit code 137)"


def test_a_submission_that_started_no_driver_says_so(world: World) -> None:
    world.launcher.refuse_submissions("spark-submit not found on PATH")
    application_id = run(world, "no-spark")
    world.tick()
    application = world.app(application_id)
    assert application.state is AppState.FAILED
    assert application.error_message == "spark-submit not found on PATH"
    last = messages(world, application_id)[-1]
    assert last == (
        "submission failed before the driver started: spark-submit not found on PATH; "
        "failed to start; no retries"
    )
    assert not [m for m in messages(world, application_id) if "code unknown" in m]


def test_always_stops_retrying_failures_to_start_and_backs_off(world: World) -> None:
    policy = {
        "type": "Always",
        "onSubmissionFailureRetries": 2,
        "onSubmissionFailureRetryInterval": 4,
    }
    world.launcher.refuse_submissions("no", "no", "no")
    application_id = run(world, "never-starts", restartPolicy=policy)
    waits = []
    for _ in range(2):
        world.tick()
        application = world.app(application_id)
        assert application.state is AppState.PENDING_RERUN
        assert application.next_attempt_at is not None
        waits.append(application.next_attempt_at - world.clock.now())
        world.clock.advance(waits[-1].total_seconds())
        world.tick()
    world.tick()
    application = world.app(application_id)
    assert waits == [timedelta(seconds=4), timedelta(seconds=8)]
    assert application.state is AppState.FAILED
    assert application.submission_attempts == 3
    assert messages(world, application_id)[-1].endswith("failed to start; 2 retries spent")


def test_each_decision_is_one_console_line(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamjobs.supervisor.decisions")
    application_id = run(world, "logged")
    world.report(application_id, {"type": "driver", "sparkApplicationId": "local-1"})
    world.tick()
    write_log(world, "stdout.log", "Traceback (most recent call last):\nKeyError: 'x'\n")
    world.launcher.exit(-1, 1)
    world.tick()
    world.tick()
    lines = [
        (record.levelname, record.getMessage())
        for record in caplog.records
        if record.name == "streamjobs.supervisor.decisions"
    ]
    assert lines == [
        ("INFO", "logged-1: attempt 1 submitted"),
        ("INFO", "logged-1: attempt 1: the driver is running"),
        ("ERROR", "logged-1: driver exited with code 1: KeyError: 'x'; failed; no retries"),
    ]
