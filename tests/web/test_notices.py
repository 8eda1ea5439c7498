"""Notices carried over a redirect are shown only as the server wrote them: a cookie that a page
of this origin wrote itself (a job's Spark UI can), another session's, a tampered or a stale one
shows nothing."""

from __future__ import annotations

import base64
import json
import time
from http.cookies import SimpleCookie

import pytest
from starlette.requests import Request

from streamjobs.http.sessions import COOKIE as SESSION_COOKIE
from streamjobs.web import notices
from streamjobs.web.notices import COOKIE, pending_notices, redirect_with_notices
from tests.web.conftest import Browser
from tests.web.html import parse

FAKE = "Your session expired: sign in again at https://evil.example/"


def request_with(cookies: dict[str, str]) -> Request:
    header = "; ".join(f"{name}={value}" for name, value in cookies.items())
    return Request({"type": "http", "headers": [(b"cookie", header.encode("latin-1"))]})


def notices_cookie(session: str, said: list[str]) -> str:
    """The notices cookie a redirect made in ``session`` sets."""
    response = redirect_with_notices(request_with({SESSION_COOKIE: session}), "/jobs", said)
    cookie: SimpleCookie = SimpleCookie(response.headers["set-cookie"])
    return cookie[COOKIE].value


def test_the_session_that_made_them_sees_them_once_fresh() -> None:
    value = notices_cookie("session-a", ["Checkpoint kept"])
    assert pending_notices(request_with({SESSION_COOKIE: "session-a", COOKIE: value})) == [
        "Checkpoint kept"
    ]


def test_another_sessions_notices_are_not_shown() -> None:
    value = notices_cookie("session-a", ["Checkpoint kept"])
    assert pending_notices(request_with({SESSION_COOKIE: "session-b", COOKIE: value})) == []
    assert pending_notices(request_with({COOKIE: value})) == []


def test_tampered_notices_are_not_shown() -> None:
    value = notices_cookie("session-a", ["Checkpoint kept"])
    _, signature = value.split(".")
    forged = json.dumps({"at": int(time.time()), "notices": [FAKE]}).encode()
    tampered = f"{base64.urlsafe_b64encode(forged).decode()}.{signature}"
    assert pending_notices(request_with({SESSION_COOKIE: "session-a", COOKIE: tampered})) == []


def test_stale_notices_are_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    value = notices_cookie("session-a", ["Checkpoint kept"])
    later = time.time() + notices.LIFETIME_SECONDS + 5
    monkeypatch.setattr(notices.time, "time", lambda: later)
    assert pending_notices(request_with({SESSION_COOKIE: "session-a", COOKIE: value})) == []


@pytest.mark.parametrize(
    "planted",
    [
        "%5B%22Your%20session%20expired%22%5D",  # the unsigned format of old
        "eyJhdCI6IDAsICJub3RpY2VzIjogWyJ4Il19.00",
        ".",
        "garbage",
    ],
)
def test_a_cookie_written_by_a_page_is_ignored(browser: Browser, planted: str) -> None:
    browser.client.cookies.set(COOKIE, planted)
    page = parse(browser.page("/jobs"))
    assert not page.has('.notice[role="status"]')
