"""One application's failure to launch or to be observed is its own, never the tick's: the
other applications start in the same tick, and the failure is the application's failed
submission, counted by its restart policy."""

from __future__ import annotations

from streamjobs.domain.states import AppState
from streamjobs.launch.base import AttemptSpec, DriverHandle, DriverHealth
from streamjobs.launch.fake import FakeLauncher
from tests.supervisor.conftest import ALICE, World

RETRY_SUBMISSION_ONCE = {
    "type": "OnFailure",
    "onFailureRetries": 0,
    "onSubmissionFailureRetries": 1,
    "onSubmissionFailureRetryInterval": 5,
}


class BrokenFor(FakeLauncher):
    """A launcher whose every call for the job ``broken`` raises what a real one should not."""

    def __init__(self, broken: str, error: Exception) -> None:
        super().__init__()
        self.broken = broken
        self.error = error
        self.submit_fails = True
        self.poll_fails = False

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if self.submit_fails and attempt.job.name == self.broken:
            raise self.error
        return super().submit(attempt)

    def poll(self, handle: DriverHandle) -> DriverHealth:
        if self.poll_fails and self._job_of(handle) == self.broken:
            raise self.error
        return super().poll(handle)

    def _job_of(self, handle: DriverHandle) -> str:
        return next(d.attempt.job.name for d in self.drivers if d.handle == handle)


def with_launcher(world: World, launcher: FakeLauncher) -> None:
    for deployment in list(world.services.launchers):
        world.services.launchers[deployment] = launcher  # type: ignore[index]
    world.launcher = launcher


def test_a_launcher_raising_for_one_job_does_not_hold_up_the_others(world: World) -> None:
    launcher = BrokenFor("broken", ValueError("embedded null byte"))
    with_launcher(world, launcher)
    broken = world.services.applications.run(
        world.create_job("broken", restartPolicy=RETRY_SUBMISSION_ONCE), actor=ALICE
    )
    healthy = world.services.applications.run(world.create_job("healthy"), actor=ALICE)
    world.tick()
    assert [driver.attempt.job.name for driver in launcher.drivers] == ["healthy"]
    assert world.app(healthy.id).state is AppState.STARTING
    world.tick()
    failed = world.app(broken.id)
    assert failed.state is AppState.PENDING_RERUN
    assert failed.submission_failures == 1
    assert "ValueError: embedded null byte" in (failed.error_message or "")
    events = world.services.applications.events(broken.id, actor=ALICE)
    assert any(e.kind == "submission-failed" and "embedded null byte" in e.message for e in events)
    world.tick(5)
    world.tick()
    world.tick()
    assert world.app(broken.id).state is AppState.FAILED
    assert world.app(broken.id).submission_attempts == 2


def test_an_application_that_cannot_be_observed_does_not_stop_the_tick(world: World) -> None:
    launcher = BrokenFor("broken", OSError("the process table cannot be read"))
    launcher.submit_fails = False
    with_launcher(world, launcher)
    broken = world.services.applications.run(world.create_job("broken"), actor=ALICE)
    world.tick()
    launcher.poll_fails = True
    healthy = world.services.applications.run(world.create_job("healthy"), actor=ALICE)
    world.tick()
    assert [driver.attempt.job.name for driver in launcher.drivers] == ["broken", "healthy"]
    assert world.app(healthy.id).state is AppState.STARTING
    assert world.app(broken.id).state is AppState.STARTING
    launcher.poll_fails = False
    token = launcher.drivers[0].attempt.report_token
    assert token is not None
    world.services.reports.receive(broken.id, token, [{"sequence": 0, "type": "heartbeat"}])
    world.tick()
    assert world.app(broken.id).state is AppState.RUNNING
