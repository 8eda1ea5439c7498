"""Sign-in limits and web sessions in the services, on each backend, with the fake clock: delays
after failures, the lockout and its lifting, the audit trail, and every way a session ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, DomainPermission, Principal, Subject, SubjectKind
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Forbidden, NotFound, TooManyAttempts, Unauthenticated
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True), source="test")
PASSWORD = "correct horse battery"
HERE = "10.0.0.1"


@pytest.fixture
def alice(services: Services) -> str:
    services.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    return "alice"


def fail(services: Services, name: str, address: str = HERE) -> None:
    with pytest.raises(Unauthenticated):
        services.sign_in.sign_in(name, "wrong password!", address=address)


def test_after_the_free_failures_each_attempt_waits_longer(
    services: Services, clock: FakeClock, alice: str
) -> None:
    for _ in range(3):
        fail(services, alice)
    fail(services, alice)  # the 4th: the free failures are used up, the next one waits 1 s
    with pytest.raises(TooManyAttempts) as refused:
        services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    assert refused.value.retry_after_seconds == 1
    clock.advance(1)
    fail(services, alice)
    with pytest.raises(TooManyAttempts) as longer:
        services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    assert longer.value.retry_after_seconds == 2
    clock.advance(2)
    assert services.sign_in.sign_in(alice, PASSWORD, address=HERE).principal.name == alice


def test_a_success_forgets_the_accounts_failures(
    services: Services, clock: FakeClock, alice: str
) -> None:
    for _ in range(3):
        fail(services, alice)
    services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    for _ in range(3):
        fail(services, alice)
    services.sign_in.sign_in(alice, PASSWORD, address=HERE)


def test_one_address_guessing_at_many_names_is_slowed_down(services: Services, alice: str) -> None:
    for number in range(11):
        fail(services, f"nobody-{number}")
    with pytest.raises(TooManyAttempts):
        services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    assert services.sign_in.sign_in(alice, PASSWORD, address="10.0.0.2").principal.name == alice


def test_the_lockout_stays_until_a_user_manager_lifts_it(
    services: Services, clock: FakeClock, alice: str
) -> None:
    for _ in range(10):
        fail(services, alice, address=f"10.1.0.{_}")
        clock.advance(900)
    assert services.sign_in.locked_accounts() == {alice}
    clock.advance(86_400 * 30)
    with pytest.raises(TooManyAttempts, match="locked") as locked:
        services.sign_in.sign_in(alice, PASSWORD, address="10.2.0.1")
    assert locked.value.retry_after_seconds is None
    bob = Actor(Principal("bob"), source="test")
    with pytest.raises(Forbidden):
        services.sign_in.unlock(alice, actor=bob)
    with pytest.raises(NotFound):
        services.sign_in.unlock("nobody", actor=ADMIN)
    assert services.sign_in.unlock(alice, actor=ADMIN)
    assert not services.sign_in.unlock(alice, actor=ADMIN)
    assert services.sign_in.sign_in(alice, PASSWORD, address="10.2.0.1").principal.name == alice


def test_a_user_manager_unlocks_users_but_not_admins(services: Services, alice: str) -> None:
    services.identity.bootstrap_admin()
    services.people.create_user("keeper", actor=ADMIN)
    services.people.set_domain_grant(
        Subject(SubjectKind.USER, "keeper"),
        DomainPermission.MANAGE_USERS,
        granted=True,
        actor=ADMIN,
    )
    keeper = Actor(services.identity.principal("keeper"), source="test")
    services.sign_in.unlock(alice, actor=keeper)
    with pytest.raises(Forbidden):
        services.sign_in.unlock("admin", actor=keeper)


def test_the_counts_and_the_lockout_survive_a_restart(
    database_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    settings = Settings(home=tmp_path / "home", database_url=database_url)
    first = open_services(settings, clock=clock)
    first.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    for _ in range(10):
        fail(first, "alice")
        clock.advance(900)
    first.store.close()
    again = open_services(settings, clock=clock)
    with pytest.raises(TooManyAttempts, match="locked"):
        again.sign_in.sign_in("alice", PASSWORD, address="10.9.9.9")
    again.store.close()


def test_every_attempt_is_audited_with_name_address_and_reason_never_the_password(
    services: Services, alice: str
) -> None:
    fail(services, alice)
    fail(services, "nobody")
    services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    with services.store.transaction() as repos:
        entries = repos.audit.list(action="signin.")
    found = {(e.action, e.resource_name, e.detail.get("reason"), e.source) for e in entries}
    assert ("signin.failed", alice, "wrong password", HERE) in found
    assert ("signin.failed", "nobody", "no such user", HERE) in found
    assert ("signin.succeeded", alice, None, HERE) in found
    everything = json.dumps([[e.detail, e.resource_name, e.actor] for e in entries])
    assert "wrong password!" not in everything
    assert PASSWORD not in everything


def test_refused_attempts_are_audited_too(services: Services, alice: str) -> None:
    for _ in range(4):
        fail(services, alice)
    with pytest.raises(TooManyAttempts):
        services.sign_in.sign_in(alice, PASSWORD, address=HERE)
    with services.store.transaction() as repos:
        refused = repos.audit.list(action="signin.refused")
    assert [(e.resource_name, e.detail["reason"]) for e in refused] == [
        (alice, "account throttled")
    ]


@pytest.mark.parametrize("name", ["", "a\x00b", "x" * 100_000, "ünïcödé\x7f", "../../etc"])
def test_odd_names_are_only_wrong_credentials(services: Services, name: str) -> None:
    fail(services, name)
    with services.store.transaction() as repos:
        (entry,) = repos.audit.list(action="signin.failed")
    assert "\x00" not in entry.resource_name
    assert len(entry.resource_name) <= 255


def test_a_session_ends_at_sign_out_idle_timeout_and_lifetime(
    services: Services, clock: FakeClock, alice: str
) -> None:
    user_id = services.sign_in.sign_in(alice, PASSWORD, address=HERE).user_id
    session = services.sessions.start(user_id)
    found = services.sessions.find(session.secret)
    assert found is not None
    assert found.principal.name == alice
    assert found.csrf == session.csrf
    assert services.sessions.find(session.secret + "x") is None
    services.sessions.end(session.secret)
    assert services.sessions.find(session.secret) is None

    idle = services.sessions.start(user_id)
    clock.advance(2 * 3600)
    assert services.sessions.find(idle.secret) is None  # unused for the 2 h idle timeout

    used = services.sessions.start(user_id)
    for _ in range(12):
        clock.advance(3600 - 1)
        assert services.sessions.find(used.secret) is not None
    clock.advance(12)
    assert services.sessions.find(used.secret) is None  # 12 h after sign-in, used or not


def test_password_change_deletion_and_sign_out_everywhere_end_sessions(
    services: Services, alice: str
) -> None:
    user_id = services.sign_in.sign_in(alice, PASSWORD, address=HERE).user_id
    sessions = [services.sessions.start(user_id) for _ in range(2)]
    assert services.sessions.end_everywhere(alice, actor=ADMIN) == 2
    assert all(services.sessions.find(s.secret) is None for s in sessions)

    changed = services.sessions.start(user_id)
    services.identity.set_password(alice, "another long password", actor=ADMIN)
    assert services.sessions.find(changed.secret) is None

    deleted = services.sessions.start(user_id)
    services.people.delete_user(alice, actor=ADMIN)
    services.people.create_user(alice, actor=ADMIN, password=PASSWORD, is_admin=True)
    assert services.sessions.find(deleted.secret) is None


def test_only_a_user_manager_signs_someone_else_out(services: Services, alice: str) -> None:
    as_alice = Actor(services.identity.principal(alice), source="test")
    assert services.sessions.end_everywhere(alice, actor=as_alice) == 0
    with pytest.raises(Forbidden):
        services.sessions.end_everywhere("admin", actor=as_alice)
    with pytest.raises(NotFound):
        services.sessions.end_everywhere("nobody", actor=ADMIN)
