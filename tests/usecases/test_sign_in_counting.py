"""How sign-in attempts are counted, on each backend: concurrent guesses never get past the
lockout, an IPv6 host is counted by its /64, names that are no account's are never locked for
good (a user created later under one starts afresh) and their counts are pruned, and a session's
use is recorded often enough for an idle timeout under a minute."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import NotFound, TooManyAttempts, Unauthenticated
from streamjobs.services.container import Services, open_services
from streamjobs.services.passwords import Passwords
from streamjobs.services.sign_in import SignInService, policies_of
from streamjobs.services.web_sessions import SessionService
from streamjobs.settings import Settings
from streamjobs.store.sign_in_tables import SignInThrottleRow
from streamjobs.store.sign_in_throttles import ACCOUNT

ADMIN = Actor(Principal("admin", is_admin=True), source="test")
PASSWORD = "correct horse battery"
HERE = "10.0.0.1"
NO_DELAYS: dict[str, Any] = {"sign_in_free_failures": 1000, "sign_in_address_free_failures": 1000}
WINDOW = 3600


@pytest.fixture
def limited(database_url: str, tmp_path: Path, clock: FakeClock) -> Iterator[Services]:
    """Services whose accounts lock after 3 failures, with no delays before that."""
    settings = Settings(
        home=tmp_path / "home",
        database_url=database_url,
        sign_in_lockout_failures=3,
        sign_in_failure_window_seconds=WINDOW,
        **NO_DELAYS,
    )
    services = open_services(settings, clock=clock)
    yield services
    services.store.close()


def fail(services: Services, name: str, address: str = HERE) -> None:
    with pytest.raises(Unauthenticated):
        services.sign_in.sign_in(name, "wrong password!", address=address)


def throttle_rows(services: Services) -> int:
    with services.store.engine.connect() as connection:
        count = connection.scalar(select(func.count()).select_from(SignInThrottleRow))
    assert count is not None
    return count


class Gate:
    """A password check that holds every check until opened; counts the checks."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._open = False
        self.checks = 0

    def __call__(self, stored_hash: str | None, password: str) -> bool:
        with self._changed:
            self.checks += 1
            self._changed.wait_for(lambda: self._open, timeout=120)
        return False

    def open(self) -> None:
        with self._changed:
            self._open = True
            self._changed.notify_all()


def test_concurrent_wrong_sign_ins_check_no_more_passwords_than_the_lockout_allows(
    limited: Services,
) -> None:
    limited.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    gate = Gate()
    account, address = policies_of(limited.settings)
    sign_in = SignInService(
        store=limited.store,
        clock=limited.clock,
        account_policy=account,
        address_policy=address,
        passwords=Passwords(limited.settings.parsed_password_cost),
        check_password=gate,
    )

    def attempt(number: int) -> str:
        try:
            sign_in.sign_in("alice", f"guess {number}", address=f"10.0.1.{number}")
        except TooManyAttempts:
            return "refused"
        except Unauthenticated:
            return "wrong"
        return "signed in"

    attempts = 8
    with ThreadPoolExecutor(max_workers=attempts) as pool:
        results = [pool.submit(attempt, n) for n in range(attempts)]
        # every attempt is either refused or held in the gate; without counting before the
        # check, all eight would be held there
        deadline = time.monotonic() + 60
        while gate.checks + sum(r.done() for r in results) < attempts:
            assert time.monotonic() < deadline, (gate.checks, [r.done() for r in results])
            time.sleep(0.01)
        checked_while_held = gate.checks
        gate.open()
        outcomes = sorted(r.result() for r in results)
    assert checked_while_held == 3
    assert outcomes == ["refused"] * 5 + ["wrong"] * 3
    assert limited.sign_in.locked_accounts() == {"alice"}
    with limited.store.transaction() as repos:
        state = repos.sign_in_throttles.state(ACCOUNT, "alice")
    assert state is not None
    assert state.failures == 3


def test_a_success_takes_its_attempt_back_from_the_address(
    services: Services, clock: FakeClock
) -> None:
    services.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    for _ in range(30):  # more than the address's 10 free failures, were they counted
        services.sign_in.sign_in("alice", PASSWORD, address=HERE)
    for number in range(10):
        fail(services, f"nobody-{number}")
    assert services.sign_in.sign_in("alice", PASSWORD, address=HERE).principal.name == "alice"


def test_an_ipv6_host_is_counted_by_its_64(services: Services) -> None:
    services.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    for number in range(11):  # the address's 10 free failures and one, each from a new address
        fail(services, f"nobody-{number}", address=f"2001:db8:0:7::{number + 1:x}")
    with pytest.raises(TooManyAttempts):
        services.sign_in.sign_in("alice", PASSWORD, address="2001:db8:0:7:ffff::1")
    signed_in = services.sign_in.sign_in("alice", PASSWORD, address="2001:db8:0:8::1")
    assert signed_in.principal.name == "alice"


def test_a_name_that_is_no_account_is_refused_like_one_but_never_locked_for_good(
    limited: Services, clock: FakeClock
) -> None:
    for _ in range(3):
        fail(limited, "ghost")
    with pytest.raises(TooManyAttempts, match="locked") as refused:
        limited.sign_in.sign_in("ghost", PASSWORD, address=HERE)
    assert refused.value.retry_after_seconds is None
    assert limited.sign_in.locked_accounts() == set()
    with pytest.raises(NotFound):
        limited.sign_in.unlock("ghost", actor=ADMIN)
    clock.advance(WINDOW)
    fail(limited, "ghost")


def test_a_user_created_under_a_name_tried_before_starts_with_no_failures(
    limited: Services,
) -> None:
    for _ in range(3):
        fail(limited, "carol")
    with pytest.raises(TooManyAttempts):
        limited.sign_in.sign_in("carol", PASSWORD, address=HERE)
    limited.people.create_user("carol", actor=ADMIN, password=PASSWORD)
    assert limited.sign_in.sign_in("carol", PASSWORD, address=HERE).principal.name == "carol"


def test_counts_idle_for_longer_than_the_window_are_pruned_but_lockouts_stay(
    limited: Services, clock: FakeClock
) -> None:
    limited.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    for _ in range(3):
        fail(limited, "alice")
    for number in range(20):
        fail(limited, f"nobody-{number}", address=f"10.0.2.{number}")
    assert throttle_rows(limited) == 1 + 1 + 20 + 20  # alice, here, the names, their addresses
    clock.advance(WINDOW + 1)
    fail(limited, "latecomer", address="10.0.3.1")
    assert throttle_rows(limited) == 1 + 2  # alice's lockout, the latecomer and its address
    assert limited.sign_in.locked_accounts() == {"alice"}


def test_an_idle_timeout_under_a_minute_lets_a_session_in_use_live(
    services: Services, clock: FakeClock
) -> None:
    services.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    user_id = services.sign_in.sign_in("alice", PASSWORD, address=HERE).user_id
    sessions = SessionService(
        store=services.store,
        clock=clock,
        lifetime=timedelta(hours=1),
        idle_timeout=timedelta(seconds=10),
    )
    session = sessions.start(user_id)
    for _ in range(10):
        clock.advance(6)
        assert sessions.find(session.secret) is not None
    clock.advance(10)
    assert sessions.find(session.secret) is None
