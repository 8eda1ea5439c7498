"""Jars resolved in the background before a driver starts, the tick never waiting for them.

Over a real store, a fake launcher and ``FakeJarResolver``: an application whose jars are not
resolved waits where it is (with an event) while others start; it then starts with the jar
files, or fails its submission naming the coordinate, after which Run refuses the job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from streamjobs.composition import build_server
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import CannotRun
from streamjobs.domain.jar_requests import JarRequest
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.states import AppState
from streamjobs.launch.fake import FakeLauncher
from streamjobs.launch.fake_jars import FakeJarResolver
from streamjobs.launch.jars import JarResolution, known_failure
from streamjobs.services.applications import ApplicationService
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from streamjobs.supervisor.jar_resolutions import BackgroundJarResolutions, Waiting
from streamjobs.supervisor.loop import Supervisor
from streamjobs.supervisor.server import supervisor_for
from tests.factories import pipeline_manifest, python_manifest
from tests.supervisor.conftest import ALICE

PACKAGE = "com.example:udfs:1.0"
MISSING = "com.example:no-such-thing:9.9.9"
REQUEST = JarRequest(packages=(PACKAGE,))
WAIT_SECONDS = 30.0


class Resolved:
    """What ``on_resolved`` was told, and a way to wait for it."""

    def __init__(self) -> None:
        self.calls: list[tuple[JarRequest, JarResolution, list[str]]] = []
        self.done = threading.Event()

    def __call__(self, request: JarRequest, outcome: JarResolution, waited: list[str]) -> None:
        self.calls.append((request, outcome, waited))
        self.done.set()


def test_a_request_needing_nothing_is_ready_at_once() -> None:
    resolutions = BackgroundJarResolutions(FakeJarResolver(hold=True), on_resolved=Resolved())

    assert resolutions.check("app-1", JarRequest()) == JarResolution()
    assert resolutions.resolving() == 0


def test_applications_wait_for_one_resolution_and_are_told_when_it_ends() -> None:
    resolver, resolved = FakeJarResolver(hold=True), Resolved()
    resolutions = BackgroundJarResolutions(resolver, on_resolved=resolved)

    assert resolutions.check("app-1", REQUEST) == Waiting(first=True)
    assert resolutions.check("app-1", REQUEST) == Waiting(first=False)
    assert resolutions.check("app-2", REQUEST) == Waiting(first=True)
    assert resolutions.resolving() == 1
    resolver.release()

    assert resolved.done.wait(WAIT_SECONDS)
    [(request, outcome, waited)] = resolved.calls
    assert (request, waited) == (REQUEST, ["app-1", "app-2"])
    assert outcome.jars == ("/jars/com.example_udfs_1.0.jar",)
    assert resolutions.check("app-3", REQUEST) == outcome
    assert resolver.resolved == [REQUEST], "resolved once for everyone"


def test_a_known_outcome_starts_no_resolution() -> None:
    resolver = FakeJarResolver()
    known = resolver.resolve(REQUEST)
    resolutions = BackgroundJarResolutions(resolver, on_resolved=Resolved())

    assert resolutions.check("app-1", REQUEST) == known
    assert resolver.resolved == [REQUEST]


def test_a_resolver_that_breaks_fails_the_request_once() -> None:
    class Broken(FakeJarResolver):
        def resolve(self, request: JarRequest) -> JarResolution:
            raise RuntimeError("disk on fire")

    resolved = Resolved()
    resolutions = BackgroundJarResolutions(Broken(), on_resolved=resolved)

    assert isinstance(resolutions.check("app-1", REQUEST), Waiting)
    assert resolved.done.wait(WAIT_SECONDS)
    outcome = resolutions.check("app-1", REQUEST)
    assert isinstance(outcome, JarResolution)
    assert outcome.error == "RuntimeError: disk on fire"


class World:
    def __init__(self, services: Services, launcher: FakeLauncher, jars: FakeJarResolver) -> None:
        self.services = services
        self.launcher = launcher
        self.jars = jars
        self.supervisor: Supervisor = supervisor_for(
            replace(services, jars=jars), executor_reader=lambda handle: None
        )
        self.applications = ApplicationService(
            store=services.store,
            clock=services.clock,
            checkpoint_root=services.settings.resolved_checkpoint_root,
            jar_failures=partial(known_failure, jars),
        )

    def run(self, manifest: dict[str, Any]) -> str:
        self.services.jobs.create(manifest, actor=ALICE)
        return self.applications.run(manifest["metadata"]["name"], actor=ALICE).id

    def state(self, application_id: str) -> AppState:
        application = self.services.applications.get(application_id, actor=ALICE).application
        return AppState(application.state)

    def error(self, application_id: str) -> str:
        application = self.services.applications.get(application_id, actor=ALICE).application
        return application.error_message or ""

    def events(self, application_id: str) -> list[tuple[str, str]]:
        events = self.services.applications.events(application_id, actor=ALICE)
        return [(event.kind, event.message) for event in events]

    def wait_for_event(self, application_id: str, kind: str) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while kind not in [k for k, _ in self.events(application_id)]:
            assert time.monotonic() < deadline, f"no {kind} event: {self.events(application_id)}"
            time.sleep(0.05)


@pytest.fixture
def world(database_url: str, tmp_path: Path) -> Iterator[World]:
    launcher = FakeLauncher()
    settings = Settings(
        home=tmp_path / "home", database_url=database_url, public_url="http://127.0.0.1:1"
    )
    server = build_server(
        settings,
        clock=FakeClock(),
        launchers={Deployment.SINGLE_NODE: launcher},
        supervise=False,
    )
    yield World(server.services, launcher, FakeJarResolver(hold=True, missing=frozenset({MISSING})))
    server.services.store.close()


def python_job(name: str, *packages: str) -> dict[str, Any]:
    manifest = python_manifest(name)
    manifest["spec"]["dependencies"] = {"packages": list(packages)}
    return manifest


def test_an_application_waits_for_its_jars_while_others_start(world: World) -> None:
    waiting = world.run(python_job("uses-udfs", PACKAGE))
    other = world.run(pipeline_manifest("ticks"))

    world.supervisor.run_once()
    world.supervisor.run_once()

    assert [driver.attempt.application_id for driver in world.launcher.drivers] == [other]
    assert world.state(waiting) is AppState.STARTING
    resolving = [message for kind, message in world.events(waiting) if kind == "jars-resolving"]
    assert resolving == [f"resolving 1 connector jar: {PACKAGE}"], "said once, not every tick"

    world.jars.release()
    world.wait_for_event(waiting, "jars-resolved")
    world.supervisor.run_once()

    started = world.launcher.drivers[-1].attempt
    assert started.application_id == waiting
    assert started.packaged_jars == ("/jars/com.example_udfs_1.0.jar",)
    assert world.launcher.drivers[0].attempt.packaged_jars is None, "a job needing no jars"


def test_jars_resolved_before_start_at_once(world: World) -> None:
    world.jars.release()
    world.jars.resolve(REQUEST)
    application = world.run(python_job("uses-udfs", PACKAGE))

    world.supervisor.run_once()

    assert [driver.attempt.application_id for driver in world.launcher.drivers] == [application]
    assert "jars-resolving" not in [kind for kind, _ in world.events(application)]


def test_a_coordinate_that_cannot_be_resolved_fails_the_submission_naming_it(
    world: World,
) -> None:
    application = world.run(python_job("broken", PACKAGE, MISSING))
    world.supervisor.run_once()
    world.jars.release()
    world.wait_for_event(application, "jars-unresolved")

    world.supervisor.run_once()  # the attempt fails to start
    world.supervisor.run_once()  # and the restart policy (Never) judges it

    assert world.launcher.drivers == []
    assert world.state(application) is AppState.FAILED
    assert world.error(application) == (
        f"cannot resolve the job's jars: unresolved dependency {MISSING} (not found)"
    )
    assert (
        "jars-unresolved",
        f"could not resolve 2 connector jars: unresolved dependency {MISSING} (not found)",
    ) in world.events(application)

    with pytest.raises(CannotRun) as refused:
        world.applications.run("broken", actor=ALICE)
    assert [(error.path, error.message) for error in refused.value.errors] == [
        (
            "spec.dependencies.packages[1]",
            f"resolving the job's jars failed: unresolved dependency {MISSING} (not found)",
        )
    ]


def test_a_job_whose_jars_resolved_is_not_refused_at_run(world: World) -> None:
    world.jars.release()
    world.jars.resolve(REQUEST)

    application = world.run(python_job("uses-udfs", PACKAGE))

    assert world.state(application) is AppState.STARTING


def test_a_connector_of_a_format_that_cannot_be_resolved_is_refused_on_the_dependencies(
    world: World,
) -> None:
    delta = "io.delta:delta-spark_4.1_2.13:4.4.0"
    world.jars.missing = frozenset({delta})
    world.jars.release()
    manifest = pipeline_manifest("to-delta")
    manifest["spec"]["pipeline"]["outputs"][0].update(format="delta")
    world.services.jobs.create(manifest, actor=ALICE)
    world.jars.resolve(JarRequest(packages=(delta,), resolver_settings=()))

    with pytest.raises(CannotRun) as refused:
        world.applications.run("to-delta", actor=ALICE)

    [error] = refused.value.errors
    assert error.path == "spec.dependencies"
    assert delta in error.message
