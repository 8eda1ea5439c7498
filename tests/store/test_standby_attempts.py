"""A standby driver's attempt in the store: recorded as the next attempt, not the latest one
until promoted, found apart (one application's, or every active application's), on each
backend."""

from __future__ import annotations

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.states import AppState
from streamjobs.store import Store
from tests.store.conftest import AddApplication


def test_a_held_standby_is_not_the_latest_attempt_until_promoted(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders", state=AppState.RUNNING)
    with store.transaction() as repos:
        active = repos.applications.add_attempt(
            application.id, number=1, submitted_at=clock.now(), directory="/apps/x/1"
        )
        assert repos.applications.next_attempt_number(application.id) == 2
        clock.advance(10)
        held = repos.applications.add_attempt(
            application.id,
            number=2,
            submitted_at=clock.now(),
            directory="/apps/x/2",
            standby=True,
            token_hash="digest-of-the-standby-token",
        )
    with store.transaction() as repos:
        assert repos.applications.latest_attempt(application.id) == active
        assert repos.applications.latest_attempts_in([AppState.RUNNING]) == {application.id: active}
        assert repos.applications.standby_attempt(application.id) == held
        assert repos.applications.standby_attempts_in([AppState.RUNNING]) == {application.id: held}
        assert repos.applications.standby_attempts_in([AppState.FAILED]) == {}
        assert repos.applications.next_attempt_number(application.id) == 3
    assert held.held
    assert held.token_hash == "digest-of-the-standby-token"
    assert held.reporting_since == held.submitted_at

    clock.advance(30)
    with store.transaction() as repos:
        promoted = repos.applications.update_attempt(application.id, 2, promoted_at=clock.now())
    with store.transaction() as repos:
        assert repos.applications.latest_attempt(application.id) == promoted
        assert repos.applications.latest_attempts_in([AppState.RUNNING]) == {
            application.id: promoted
        }
        assert repos.applications.standby_attempt(application.id) is None
    assert not promoted.held
    assert promoted.reporting_since == clock.now()


def test_the_newest_standby_is_found_ended_or_not(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    application = add_application("orders", state=AppState.RUNNING)
    with store.transaction() as repos:
        repos.applications.add_attempt(
            application.id, number=1, submitted_at=clock.now(), directory="/apps/x/1"
        )
        for number in (2, 3):
            repos.applications.add_attempt(
                application.id,
                number=number,
                submitted_at=clock.now(),
                directory=f"/apps/x/{number}",
                standby=True,
            )
        repos.applications.update_attempt(application.id, 3, ended_at=clock.now(), exit_code=1)
    with store.transaction() as repos:
        newest = repos.applications.standby_attempt(application.id)
        assert newest is not None
        assert (newest.number, newest.exit_code) == (3, 1)
        latest = repos.applications.latest_attempt(application.id)
        assert latest is not None
        assert latest.number == 1
