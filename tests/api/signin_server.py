"""A real server (uvicorn, SQLite or PostgreSQL) on the fake clock, with an admin token, for the
sign-in and session tests; and a web client that signs in with the form as a browser does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from streamjobs.composition import build_server
from streamjobs.domain.clock import FakeClock
from streamjobs.services.container import Services
from streamjobs.settings import Settings
from tests.live_server import live_server

PASSWORD = "correct horse battery"
COOKIE = "streamjobs_session"


@dataclass
class SignInServer:
    url: str
    clock: FakeClock
    services: Services
    api: httpx.Client
    """Signed in as admin with a bearer token."""
    admin_token: str
    admin_password: str

    def create_user(self, name: str, *, admin: bool = False) -> None:
        body = {"name": name, "password": PASSWORD, "admin": admin}
        self.api.post("/api/v1/users", json=body).raise_for_status()

    def sign_in(self, user: str, password: str = PASSWORD) -> httpx.Response:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            return client.post("/signin", data={"user": user, "password": password})

    def session_of(self, user: str, password: str = PASSWORD) -> str:
        """A new session of ``user``: the cookie's value."""
        response = self.sign_in(user, password)
        assert response.status_code == 303, response.text
        return response.cookies[COOKIE]

    def browser(self, cookie: str) -> httpx.Client:
        """A client that holds only this session cookie (no token)."""
        return httpx.Client(base_url=self.url, cookies={COOKIE: cookie}, timeout=60)


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


@contextmanager
def signin_server(
    home: Path, database_url: str, services_of: Any = None, **settings: Any
) -> Iterator[SignInServer]:
    """The server; ``services_of`` may replace services before it serves."""
    clock = FakeClock()
    server = build_server(
        Settings(home=home, database_url=database_url, **settings), clock=clock, supervise=False
    )
    services = server.services
    bootstrap = services.identity.bootstrap_admin()
    token, password = bootstrap.token, bootstrap.password
    assert token is not None
    assert password is not None
    if services_of is not None:
        services = services_of(services)
    try:
        with (
            live_server(services) as url,
            httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
            ) as api,
        ):
            yield SignInServer(
                url=url,
                clock=clock,
                services=services,
                api=api,
                admin_token=token,
                admin_password=password,
            )
    finally:
        server.close()
