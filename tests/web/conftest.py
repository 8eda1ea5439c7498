"""Web pages over HTTP: a real server (fake launcher, supervisor ticked by the test) and a client
signed in as admin with a session cookie, as a browser would be."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.staged_server import Stage, stage

__all__ = ["stage"]


@dataclass
class Browser:
    """A signed-in HTTP client that remembers the session's CSRF token."""

    client: httpx.Client
    csrf: str
    stage: Stage

    def page(self, path: str) -> httpx.Response:
        response = self.client.get(path)
        found = re.search(r'<meta name="csrf-token" content="([^"]*)"', response.text)
        if found and found.group(1):
            self.csrf = found.group(1)
        return response

    def submit(self, path: str, fields: dict[str, str | list[str]]) -> httpx.Response:
        """POST a form the way a browser does, with the session's CSRF token."""
        return self.client.post(path, data={**fields, "csrf": self.csrf})


@pytest.fixture
def browser(stage: Stage) -> Iterator[Browser]:
    with httpx.Client(base_url=stage.url, timeout=30) as client:
        signed_in = client.post(
            "/signin", data={"user": "admin", "password": stage.password, "next": "/jobs"}
        )
        assert signed_in.status_code == 303, signed_in.text
        session = Browser(client=client, csrf="", stage=stage)
        session.page("/jobs")
        assert session.csrf
        yield session


@pytest.fixture
def anonymous_web(stage: Stage) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stage.url, timeout=30) as client:
        yield client
