"""An attempt's private files (report token, secret Spark settings) are removed once its driver
has ended: when the loop sees the driver exit, when its submission fails, and, on a server's
first tick, for attempts that ended while no server removed them. Logs stay."""

from __future__ import annotations

from pathlib import Path

from streamjobs.domain.states import AppState
from streamjobs.launch.attempt_directory import REPORT_TOKEN_FILE, SECRET_CONF_FILE, STDERR_FILE
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.loop import Supervisor, SupervisorConfig
from streamjobs.supervisor.reconcile import Timing
from tests.supervisor.conftest import ALICE, World

WRITTEN = (REPORT_TOKEN_FILE, SECRET_CONF_FILE, STDERR_FILE)


def write_attempt_files(directory: Path) -> None:
    """What a launcher leaves in an attempt directory: private files and a log."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in WRITTEN:
        (directory / name).write_text(f"{name} of {directory.name}\n")


def left_in(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir()}


def running(world: World, name: str = "ticks") -> tuple[str, Path]:
    """A running application of a new job ``name`` and its attempt directory, files written."""
    world.create_job(name)
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application.id).state is AppState.RUNNING
    directory = Path(world.launcher.drivers[-1].handle.directory)
    write_attempt_files(directory)
    return application.id, directory


def test_a_running_attempt_keeps_its_files_and_an_exited_one_loses_the_private_ones(
    world: World,
) -> None:
    application_id, directory = running(world)
    world.tick()
    assert left_in(directory) == set(WRITTEN)
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.FAILED
    assert left_in(directory) == {STDERR_FILE}


def test_a_stopped_attempt_loses_its_private_files(world: World) -> None:
    application_id, directory = running(world)
    world.services.applications.stop("ticks", actor=ALICE)
    world.tick()
    world.tick()
    assert world.app(application_id).state is AppState.STOPPED
    assert left_in(directory) == {STDERR_FILE}


def test_a_failed_submission_leaves_no_private_files(world: World) -> None:
    name = world.create_job()
    application = world.services.applications.run(name, actor=ALICE)
    directory = world.services.settings.apps_directory / application.id / "1"
    write_attempt_files(directory)
    world.launcher.refuse_submissions("spark-submit is missing")
    world.tick()
    assert left_in(directory) == {STDERR_FILE}
    world.tick()
    assert world.failed_submission(application.id) == "spark-submit is missing"
    assert left_in(directory) == {STDERR_FILE}


def test_a_new_servers_first_tick_removes_what_ended_attempts_left_behind(world: World) -> None:
    ended_id, ended = running(world, "ended")
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(ended_id).state is AppState.FAILED
    _, live = running(world, "live")
    write_attempt_files(ended)  # as a server killed before removing them would leave them
    unknown = ended.parent.parent / "app-000000000000" / "1"
    not_an_attempt = ended.parent / "logs"
    for directory in (unknown, not_an_attempt):
        write_attempt_files(directory)

    restarted = supervisor_like(world)
    restarted.run_once()
    assert left_in(ended) == {STDERR_FILE}
    assert left_in(live) == set(WRITTEN)
    assert left_in(unknown) == set(WRITTEN)
    assert left_in(not_an_attempt) == set(WRITTEN)
    write_attempt_files(ended)
    restarted.run_once()
    assert left_in(ended) == set(WRITTEN)  # only the first tick looks for them


def test_a_private_file_that_cannot_be_removed_is_left_and_the_exit_still_recorded(
    world: World,
) -> None:
    application_id, directory = running(world)
    (directory / SECRET_CONF_FILE).unlink()
    (directory / SECRET_CONF_FILE).mkdir()  # unlink() fails on a directory
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.FAILED
    assert left_in(directory) == {STDERR_FILE, SECRET_CONF_FILE}


def supervisor_like(world: World) -> Supervisor:
    """A supervisor over the same store and drivers, as a restarted server builds it."""
    return Supervisor(
        store=world.services.store,
        launchers=world.services.launchers,
        attempts=AttemptFactory(
            store=world.services.store,
            apps_directory=world.services.settings.apps_directory,
            public_url="http://127.0.0.1:1",
            secrets=world.services.secrets,
        ),
        clock=world.clock,
        config=SupervisorConfig(timing=Timing(heartbeat_timeout=60, abort_grace=10)),
        executor_reader=lambda handle: None,
    )
