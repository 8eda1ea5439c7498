"""Sign-in against a real server on SQLite and PostgreSQL: failures slow further attempts down
(429 with Retry-After), enough of them lock the account until a user manager unlocks it (API, CLI
or the users page), every failure is audited, and password checks never hold up other requests."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from streamjobs.cli.main import app as cli_app
from streamjobs.domain.password_cost import DEFAULT_PASSWORD_COST
from streamjobs.services.container import Services
from streamjobs.services.passwords import Passwords
from streamjobs.services.sign_in import SignInService, policies_of
from tests.api.signin_server import PASSWORD, SignInServer, csrf_of, signin_server

NO_DELAYS = {"sign_in_free_failures": 1000, "sign_in_address_free_failures": 1000}


@pytest.fixture
def server(tmp_path: Path, database_url: str) -> Iterator[SignInServer]:
    with signin_server(tmp_path / "home", database_url) as running:
        yield running


def test_failures_answer_429_with_retry_after_and_the_form_says_when(
    server: SignInServer,
) -> None:
    server.create_user("alice")
    for _ in range(4):
        assert server.sign_in("alice", "wrong password!").status_code == 401
    refused = server.sign_in("alice")
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    assert "try again in 1 s" in refused.text
    assert "streamjobs_session" not in refused.cookies
    server.clock.advance(1)
    assert server.sign_in("alice").status_code == 303


def test_a_locked_account_is_unlocked_by_api_cli_or_the_users_page(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {"sign_in_lockout_failures": 3, **NO_DELAYS}
    with signin_server(tmp_path / "home", database_url, **settings) as server:
        admin_page = server.browser(server.session_of("admin", server.admin_password))
        for name in ("alice", "bob", "carol", "dave"):
            server.create_user(name)
            for _ in range(3):
                assert server.sign_in(name, "wrong password!").status_code == 401
            locked = server.sign_in(name)
            assert locked.status_code == 429
            assert "locked" in locked.text
            assert "retry-after" not in locked.headers
        users_page = admin_page.get("/settings/users")
        assert users_page.text.count("sign-in locked") == 4

        assert server.api.post("/api/v1/users/alice/unlock").status_code == 204
        assert server.sign_in("alice").status_code == 303

        monkeypatch.setenv("STREAMJOBS_SERVER", server.url)
        monkeypatch.setenv("STREAMJOBS_TOKEN", server.admin_token)
        monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
        unlocked = CliRunner().invoke(cli_app, ["unlock", "bob"])
        assert unlocked.exit_code == 0, unlocked.output
        assert "user/bob may sign in again" in unlocked.output
        assert server.sign_in("bob").status_code == 303

        csrf = csrf_of(admin_page.get("/settings/users"))
        assert admin_page.post("/settings/users/carol/unlock", data={}).status_code == 403
        done = admin_page.post("/settings/users/carol/unlock", data={"csrf": csrf})
        assert done.status_code == 303
        assert server.sign_in("carol").status_code == 303

        alice = server.browser(server.session_of("alice"))
        refused = alice.post(
            "/api/v1/users/dave/unlock", headers={"X-CSRF-Token": csrf_of(alice.get("/jobs"))}
        )
        assert refused.status_code == 403
        assert server.api.post("/api/v1/users/nobody/unlock").status_code == 404
        assert server.sign_in("dave").status_code == 429


def test_every_failure_is_audited_with_name_address_and_reason(server: SignInServer) -> None:
    server.create_user("alice")
    server.sign_in("alice", "wrong password!")
    server.sign_in("nobody\x00", "wrong password!")
    entries = server.api.get("/api/v1/audit", params={"action": "signin.failed"}).json()["items"]
    found = {(e["resource"]["name"], e["source"], e["detail"]["reason"]) for e in entries}
    assert found == {
        ("alice", "127.0.0.1", "wrong password"),
        ("nobody?", "127.0.0.1", "no such user"),
    }
    assert "wrong password!" not in str(entries)


class Gate:
    """A password check that waits until the gate opens, counting how many wait in it at once."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._open = False
        self.inside = 0
        self.most_inside = 0

    def __call__(self, stored_hash: str | None, password: str) -> bool:
        with self._changed:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._open, timeout=120)
            self.inside -= 1
        return False

    def wait_until_inside(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: self.inside >= count, timeout=120)

    def open(self) -> None:
        with self._changed:
            self._open = True
            self._changed.notify_all()


def test_waiting_password_checks_hold_up_no_other_request(
    tmp_path: Path, database_url: str
) -> None:
    gate = Gate()

    def gated(services: Services) -> Services:
        account, address = policies_of(services.settings)
        sign_in = SignInService(
            store=services.store,
            clock=services.clock,
            account_policy=account,
            address_policy=address,
            passwords=Passwords(services.settings.parsed_password_cost),
            check_password=gate,
        )
        return dataclasses.replace(services, sign_in=sign_in)

    with (
        signin_server(tmp_path / "home", database_url, gated, **NO_DELAYS) as server,
        ThreadPoolExecutor(max_workers=20) as pool,
    ):
        attempts = [pool.submit(server.sign_in, f"user-{n}", "wrong!") for n in range(20)]
        gate.wait_until_inside(2)
        assert server.api.get("/api/v1/jobs").status_code == 200
        assert server.api.get("/healthz").status_code == 200
        assert not any(attempt.done() for attempt in attempts)
        assert gate.inside == 2
        gate.open()
        assert [attempt.result().status_code for attempt in attempts] == [401] * 20
    assert gate.most_inside == 2


def test_a_burst_of_real_sign_ins_leaves_other_requests_answered_first(
    tmp_path: Path, database_url: str
) -> None:
    with (
        signin_server(
            tmp_path / "home", database_url, password_cost=DEFAULT_PASSWORD_COST, **NO_DELAYS
        ) as server,
        ThreadPoolExecutor(max_workers=20) as pool,
    ):
        attempts = [pool.submit(server.sign_in, f"user-{n}", "wrong!") for n in range(20)]
        wait(attempts, return_when=FIRST_COMPLETED)
        assert server.api.get("/api/v1/jobs").status_code == 200
        assert not all(attempt.done() for attempt in attempts)
        assert all(attempt.result().status_code == 401 for attempt in attempts)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"user": "x" * 10_000, "password": "y"},
        {"user": "a\x00b", "password": "\x00"},
        {"user": ["a", "b"], "password": PASSWORD},
    ],
)
def test_odd_sign_in_forms_are_wrong_credentials_never_500(
    server: SignInServer, fields: dict[str, object]
) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        response = client.post("/signin", data=fields)  # type: ignore[arg-type]
    assert response.status_code == 401
