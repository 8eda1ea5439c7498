"""Lifecycle notifications end to end over the supervisor: a real store of each backend, the
fake launcher scripting the drivers, the delivery worker sending to a real SMTP server and a
real HTTP receiver. A job that fails, one that suspends and a restart loop each produce exactly
the expected messages, with the right content, once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from streamjobs.composition import delivery_worker_for
from streamjobs.domain.states import AppState
from streamjobs.notify.worker import DeliveryWorker
from tests.delivery.conftest import receiving
from tests.notify_receivers import HttpReceiver, SmtpReceiver
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.test_loop import started as running

EVERY_LIFECYCLE_EVENT = [
    "started",
    "running",
    "completed",
    "stopped",
    "aborted",
    "failed",
    "suspended",
    "restarting",
]
SUBSCRIPTIONS = [
    {"destination": "ops-hook", "events": EVERY_LIFECYCLE_EVENT},
    {"destination": "ops-mail", "events": ["failed", "suspended", "restarting"]},
]
ON_FAILURE_TWICE = {
    "type": "OnFailure",
    "onFailureRetries": 2,
    "onFailureRetryInterval": 10,
}


class Delivered:
    def __init__(self, world: World, hook: HttpReceiver, mail: SmtpReceiver) -> None:
        self.world = world
        self.hook = hook
        self.mail = mail
        self.worker: DeliveryWorker = delivery_worker_for(world.services)

    def hook_messages(self) -> list[tuple[str, int | None, str]]:
        self.worker.run_once()
        return [(b["event"], b["attempt"], b["message"]) for b in self.hook.bodies()]

    def mail_subjects(self) -> list[str]:
        self.worker.run_once()
        return self.mail.subjects()


@pytest.fixture
def delivered(world: World) -> Iterator[Delivered]:
    with receiving(world.services) as (hook, mail):
        yield Delivered(world, hook, mail)


def started(world: World, **spec: Any) -> str:
    return running(world, notifications=SUBSCRIPTIONS, **spec)


def test_a_job_that_fails(delivered: Delivered) -> None:
    world = delivered.world
    application_id = started(world)
    assert delivered.hook_messages() == [
        ("started", 1, "started by alice"),
        ("running", 1, "attempt 1 is running"),
    ]
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.FAILED
    assert delivered.hook_messages()[2:] == [
        ("failed", 1, "attempt 1 failed: the driver failed (exit code 1)"),
    ]
    assert delivered.mail_subjects() == ["[streamjobs] ticks: failed"]
    text = delivered.mail.texts()[0]
    assert "attempt 1 failed: the driver failed (exit code 1)" in text
    assert f"http://127.0.0.1:1/applications/{application_id}" in text
    body = delivered.hook.bodies()[2]
    assert body["application"] == application_id
    assert body["link"] == f"http://127.0.0.1:1/applications/{application_id}"
    assert (body["job"], body["bundle"], body["namespace"]) == ("ticks", "default", "default")
    assert delivered.hook_messages() == delivered.hook_messages()  # nothing more, nothing twice
    assert len(delivered.hook.requests) == 3


def test_a_job_that_suspends(delivered: Delivered) -> None:
    world = delivered.world
    application_id = started(world, processing={"suspendOnFailure": True})
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.SUSPENDED
    suspended = (
        "attempt 1 failed: the driver failed (exit code 1); suspended, its checkpoint kept: "
        "resume it to go on"
    )
    assert delivered.hook_messages() == [
        ("started", 1, "started by alice"),
        ("running", 1, "attempt 1 is running"),
        ("suspended", 1, suspended),
    ]
    assert delivered.mail_subjects() == ["[streamjobs] ticks: suspended"]
    assert suspended in delivered.mail.texts()[0]
    world.services.applications.resume("ticks", actor=ALICE)
    assert delivered.hook_messages()[3:] == [
        ("started", 2, "resumed from its checkpoint: attempt 2 starting"),
    ]


def test_a_restart_loop_names_each_attempt(delivered: Delivered) -> None:
    world = delivered.world
    application_id = started(world, restartPolicy=ON_FAILURE_TWICE)
    for _ in (1, 2):
        world.launcher.exit(-1, 1)
        world.tick()
        assert world.app(application_id).state is AppState.PENDING_RERUN
        world.tick(10)
        world.report(application_id, {"type": "heartbeat"})
        world.tick()
        assert world.app(application_id).state is AppState.RUNNING
    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(application_id).state is AppState.FAILED
    cause = "attempt {} failed: the driver failed (exit code 1)"
    assert delivered.hook_messages() == [
        ("started", 1, "started by alice"),
        ("running", 1, "attempt 1 is running"),
        ("restarting", 2, f"restarting: attempt 2 in 10 s ({cause.format(1)})"),
        ("running", 2, "attempt 2 is running"),
        ("restarting", 3, f"restarting: attempt 3 in 10 s ({cause.format(2)})"),
        ("running", 3, "attempt 3 is running"),
        ("failed", 3, cause.format(3)),
    ]
    assert delivered.mail_subjects() == [
        "[streamjobs] ticks: restarting",
        "[streamjobs] ticks: restarting",
        "[streamjobs] ticks: failed",
    ]
