"""A web page's error page never asks the store again: while the SQLite store is locked, a page
whose session lookup fails answers 503 with the error page (not an empty 500), and a 404 page
for someone with a session cookie reads nothing from the store. Against a real server."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from streamjobs.store.db import Repositories
from tests.api.signin_server import SignInServer, signin_server

Opening = Callable[[], AbstractContextManager[Repositories]]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SignInServer]:
    database = tmp_path / "store" / "streamjobs.db"
    with signin_server(
        tmp_path / "home", f"sqlite:///{database}", sqlite_busy_timeout_seconds=0.2
    ) as running:
        yield running


def test_a_page_with_a_session_shows_the_error_page_while_the_store_is_locked(
    server: SignInServer, tmp_path: Path
) -> None:
    cookie = server.session_of("admin", server.admin_password)
    server.clock.advance(120)  # the session's next use is recorded: a write, which must wait
    holder = sqlite3.connect(tmp_path / "store" / "streamjobs.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with server.browser(cookie) as browser:
            page = browser.get("/jobs")
    finally:
        holder.close()
    assert page.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert "locked by another process" in page.text
    assert int(page.headers["Retry-After"]) > 0
    with server.browser(cookie) as browser:
        assert browser.get("/jobs").status_code == 200


def test_a_404_page_for_someone_signed_in_reads_nothing_from_the_store(
    server: SignInServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cookie = server.session_of("admin", server.admin_password)
    store = server.services.store
    opened: list[str] = []

    def counted(kind: str, open_: Opening) -> Opening:
        def opening() -> AbstractContextManager[Repositories]:
            opened.append(kind)
            return open_()

        return opening

    monkeypatch.setattr(store, "transaction", counted("transaction", store.transaction))
    monkeypatch.setattr(store, "reading", counted("reading", store.reading))
    with server.browser(cookie) as browser:
        missing = browser.get("/no-such-page")
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("text/html")
        assert opened == []
        assert browser.get("/jobs").status_code == 200
    assert opened  # the counting sees the store being read
