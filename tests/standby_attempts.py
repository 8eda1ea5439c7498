"""Standby drivers written straight into a staged server's store, as the supervisor records
them: a held standby starting or ready, one that ended, one promoted after the active driver
died. The API, page and CLI tests read them back; no supervisor tick runs after they are written
(the fake launcher never started these drivers), so what the store holds is what is shown."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from streamjobs.domain.states import AppState
from streamjobs.store import AttemptRecord
from tests.staged_server import Stage

STANDBY_PID = 4321
STANDBY_TOKEN_HASH = "5" * 64


def running_application(stage: Stage) -> str:
    """A RUNNING application of ``ticks`` (attempt 1, its driver reporting)."""
    started = stage.api.post("/api/v1/jobs/ticks/run")
    assert started.status_code == 201, started.text
    application_id: str = started.json()["id"]
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    assert stage.api.get(f"/api/v1/applications/{application_id}").json()["state"] == "RUNNING"
    return application_id


def add_standby(stage: Stage, application_id: str, *, ready: bool) -> AttemptRecord:
    """A standby driver held beside the application's driver: started, and ``ready`` (its
    ``running_at`` recorded) or still starting."""
    services = stage.services
    with services.store.transaction() as repos:
        number = repos.applications.next_attempt_number(application_id)
        directory = Path(services.settings.home) / "apps" / application_id / str(number)
        standby = repos.applications.add_attempt(
            application_id,
            number=number,
            submitted_at=services.clock.now(),
            directory=str(directory),
            pid=STANDBY_PID,
            master="local[2]",
            standby=True,
            token_hash=STANDBY_TOKEN_HASH,
        )
        if ready:
            standby = repos.applications.update_attempt(
                application_id, number, running_at=_later(stage)
            )
    return standby


def end_attempt(stage: Stage, application_id: str, number: int, *, outcome: str) -> None:
    """The attempt's driver exited (a standby discarded, or the active driver killed)."""
    with stage.services.store.transaction() as repos:
        repos.applications.update_attempt(
            application_id, number, ended_at=_later(stage), exit_code=137, outcome=outcome
        )


def promote(stage: Stage, application_id: str, number: int) -> datetime:
    """The active driver died and the standby ``number`` took over; when it was promoted."""
    latest = _latest(stage, application_id)
    end_attempt(stage, application_id, latest, outcome="restarted")
    promoted_at = _later(stage)
    with stage.services.store.transaction() as repos:
        repos.applications.update_attempt(application_id, number, promoted_at=promoted_at)
    return promoted_at


def set_state(stage: Stage, application_id: str, state: AppState) -> None:
    """Move the application as the supervisor would, its standby left as it was."""
    services = stage.services
    with services.store.transaction() as repos:
        record = repos.applications.get(application_id)
        repos.applications.update(
            application_id, version=record.version, at=services.clock.now(), state=state
        )


def _latest(stage: Stage, application_id: str) -> int:
    with stage.services.store.reading() as repos:
        latest = repos.applications.latest_attempt(application_id)
    assert latest is not None
    return latest.number


def _later(stage: Stage) -> datetime:
    """A second on from the last moment written: each step is at a time of its own."""
    clock = stage.services.clock
    clock.advance(1)  # type: ignore[attr-defined]  # a staged server's clock is a FakeClock
    return clock.now()
