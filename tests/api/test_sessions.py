"""Web sessions against a real server on SQLite and PostgreSQL: the cookie is an opaque id, and
a session ends at once at sign-out, on a password change, when its user is deleted (a new user
of the same name inherits nothing), when someone signs the user out everywhere (API, CLI, users
page), and after its idle timeout or lifetime."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from streamjobs.cli.main import app as cli_app
from streamjobs.services.identity import BOOTSTRAP_ACTOR
from tests.api.signin_server import SignInServer, csrf_of, signin_server


@pytest.fixture
def server(tmp_path: Path, database_url: str) -> Iterator[SignInServer]:
    with signin_server(tmp_path / "home", database_url) as running:
        running.create_user("alice")
        yield running


def signed_in(server: SignInServer, cookie: str) -> bool:
    """Whether the cookie's session still works, asked of the API and of a page."""
    with server.browser(cookie) as browser:
        api = browser.get("/api/v1/whoami").status_code
        page = browser.get("/jobs").status_code
    assert (api == 200) == (page == 200), (api, page)
    return api == 200


def test_the_cookie_is_an_opaque_id(server: SignInServer) -> None:
    cookie = server.session_of("alice")
    assert "alice" not in cookie
    padded = cookie + "=" * (-len(cookie) % 4)
    assert b"alice" not in base64.urlsafe_b64decode(padded.replace(".", ""))
    assert signed_in(server, cookie)
    assert not signed_in(server, cookie[:-2] + "xx")


def test_sign_out_ends_the_session_even_for_a_kept_cookie(server: SignInServer) -> None:
    cookie = server.session_of("alice")
    other = server.session_of("alice")
    with server.browser(cookie) as browser:
        csrf = csrf_of(browser.get("/jobs"))
        assert browser.post("/signout", data={"csrf": "stale"}).status_code == 403
        assert browser.post("/signout", data={"csrf": csrf}).status_code == 303
    assert not signed_in(server, cookie)
    assert signed_in(server, other)


def test_a_password_change_ends_every_session(server: SignInServer) -> None:
    cookie = server.session_of("alice")
    server.services.identity.set_password("alice", "a brand new password", actor=BOOTSTRAP_ACTOR)
    assert not signed_in(server, cookie)


def test_a_deleted_users_cookie_does_nothing_for_a_new_admin_of_that_name(
    server: SignInServer,
) -> None:
    cookie = server.session_of("alice")
    assert server.api.delete("/api/v1/users/alice").status_code == 204
    server.create_user("alice", admin=True)
    with server.browser(cookie) as browser:
        assert browser.get("/api/v1/whoami").status_code == 401
        assert browser.get("/api/v1/users").status_code == 401
        page = browser.get("/settings/users")
        assert page.status_code == 303
        assert page.headers["location"].startswith("/signin")
    assert signed_in(server, server.session_of("alice"))


def test_sign_out_everywhere_by_api_cli_and_the_users_page(
    server: SignInServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cookies = [server.session_of("alice") for _ in range(2)]
    ended = server.api.delete("/api/v1/users/alice/sessions")
    assert ended.json() == {"name": "alice", "endedSessions": 2}
    assert not any(signed_in(server, cookie) for cookie in cookies)

    cookie = server.session_of("alice")
    monkeypatch.setenv("STREAMJOBS_SERVER", server.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", server.admin_token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    result = CliRunner().invoke(cli_app, ["sign-out", "alice"])
    assert result.exit_code == 0, result.output
    assert "signed out everywhere (1 session(s) ended)" in result.output
    assert not signed_in(server, cookie)

    cookie = server.session_of("alice")
    with server.browser(server.session_of("admin", server.admin_password)) as admin:
        csrf = csrf_of(admin.get("/settings/users"))
        button = admin.post("/settings/users/alice/sign-out-everywhere", data={"csrf": csrf})
        assert button.status_code == 303
        assert "user-signed-out" in button.headers["location"]
    assert not signed_in(server, cookie)


def test_only_a_user_manager_signs_someone_else_out(server: SignInServer) -> None:
    server.create_user("bob")
    bob = server.session_of("bob")
    with server.browser(server.session_of("alice")) as alice:
        csrf = csrf_of(alice.get("/jobs"))
        refused = alice.delete("/api/v1/users/bob/sessions", headers={"X-CSRF-Token": csrf})
        assert refused.status_code == 403
        assert alice.delete("/api/v1/users/bob/sessions").status_code == 403  # no CSRF token
        mine = alice.delete("/api/v1/users/alice/sessions", headers={"X-CSRF-Token": csrf})
        assert mine.json()["endedSessions"] == 1
    assert signed_in(server, bob)
    assert server.api.delete("/api/v1/users/nobody/sessions").status_code == 404


def test_a_session_ends_after_its_idle_timeout_and_its_lifetime(server: SignInServer) -> None:
    idle = server.session_of("alice")
    server.clock.advance(2 * 3600)
    assert not signed_in(server, idle)

    used = server.session_of("alice")
    for _ in range(11):
        server.clock.advance(3600)
        assert signed_in(server, used)
    server.clock.advance(3600)
    assert not signed_in(server, used)


def test_changes_made_with_a_session_need_its_csrf_token(server: SignInServer) -> None:
    """In the form field or the header; a page's router checks it before the route runs."""
    cookie = server.session_of("alice")
    with server.browser(cookie) as browser:
        csrf = csrf_of(browser.get("/jobs"))
        refused = browser.post("/settings/tokens", data={"name": "t"})
        assert refused.status_code == 403
        wrong = browser.post("/settings/tokens", data={"name": "t", "csrf": csrf + "x"})
        assert wrong.status_code == 403
        made = browser.post("/settings/tokens", data={"name": "t", "csrf": csrf})
        assert made.status_code in (200, 303)
        by_header = browser.post(
            "/settings/tokens", data={"name": "u"}, headers={"X-CSRF-Token": csrf}
        )
        assert by_header.status_code in (200, 303)
