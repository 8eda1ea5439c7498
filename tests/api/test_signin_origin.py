"""Where a sign-in comes from, against a real server: a sign-in form posted from another site is
refused (login CSRF: it would sign the visitor into the attacker's account and end their own
session), and the client's address is taken from X-Forwarded-For only when the peer is a trusted
proxy (by default no one is)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from streamjobs.settings import Settings
from tests.api.signin_server import COOKIE, PASSWORD, SignInServer, signin_server

PUBLIC_URL = "https://jobs.example.com"


@pytest.fixture
def server(tmp_path: Path, database_url: str) -> Iterator[SignInServer]:
    with signin_server(tmp_path / "home", database_url, public_url=PUBLIC_URL) as running:
        running.create_user("alice")
        yield running


def post_sign_in(server: SignInServer, headers: dict[str, str], cookie: str = "") -> httpx.Response:
    cookies = {COOKIE: cookie} if cookie else None
    with httpx.Client(base_url=server.url, timeout=60, cookies=cookies) as client:
        return client.post("/signin", data={"user": "alice", "password": PASSWORD}, headers=headers)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},  # this host, another port: another origin
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_sign_in_from_another_site_is_refused_and_keeps_the_visitors_session(
    server: SignInServer, headers: dict[str, str]
) -> None:
    victim = server.session_of("admin", server.admin_password)
    refused = post_sign_in(server, headers, cookie=victim)
    assert refused.status_code == 403
    assert refused.headers["content-type"].startswith("text/html")
    assert "another site" in refused.text
    assert COOKIE not in refused.cookies
    with server.browser(victim) as browser:
        assert browser.get("/api/v1/whoami").json()["name"] == "admin"
    audited = server.api.get("/api/v1/audit", params={"action": "signin."}).json()["items"]
    assert all(entry["resource"]["name"] != "alice" for entry in audited)


def test_a_sign_in_from_the_servers_own_page_or_no_browser_is_let_through(
    server: SignInServer,
) -> None:
    own = server.url
    for headers in (
        {"Origin": own, "Sec-Fetch-Site": "same-origin"},  # as Chromium posts the form
        {"Origin": PUBLIC_URL},  # behind a proxy that answers at the public URL
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},  # typed in or bookmarked
        {},  # not a browser: scripts, the tests
    ):
        signed_in = post_sign_in(server, headers)
        assert signed_in.status_code == 303, (headers, signed_in.text)
        assert COOKIE in signed_in.cookies


def source_of_failed_sign_in(server: SignInServer, forwarded_for: str) -> str:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        failed = client.post(
            "/signin",
            data={"user": "alice", "password": "wrong password!"},
            headers={"X-Forwarded-For": forwarded_for},
        )
    assert failed.status_code == 401
    entries = server.api.get("/api/v1/audit", params={"action": "signin.failed"}).json()
    sources: list[str] = [entry["source"] for entry in entries["items"]]
    assert len(sources) == 1
    return sources[0]


def test_x_forwarded_for_from_a_peer_that_is_no_trusted_proxy_is_ignored(
    server: SignInServer,
) -> None:
    assert source_of_failed_sign_in(server, "203.0.113.7") == "127.0.0.1"


def test_x_forwarded_for_from_a_trusted_proxy_names_the_client(
    tmp_path: Path, database_url: str
) -> None:
    trusted = {"trusted_proxies": ["127.0.0.0/8"]}
    with signin_server(tmp_path / "home", database_url, **trusted) as server:
        server.create_user("alice")
        assert source_of_failed_sign_in(server, "203.0.113.7") == "203.0.113.7"


@pytest.mark.parametrize("proxies", [["proxy.example"], ["10.0.0.1/40"], [""]])
def test_a_trusted_proxy_must_be_an_address_or_a_network(proxies: list[str]) -> None:
    with pytest.raises(ValidationError, match="trusted proxy"):
        Settings(trusted_proxies=proxies)
