"""Assertions on problem+json answers."""

from __future__ import annotations

from typing import Any

import httpx


def problem_of(response: httpx.Response, status: int) -> dict[str, Any]:
    """The problem document of an error answer, after checking its status and media type."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["title"]
    assert body["detail"]
    return body


def error_paths(response: httpx.Response, status: int = 422) -> list[str]:
    return [error["path"] for error in problem_of(response, status).get("errors", [])]
