"""Talking HTTP to a streamjobs server: requests, and what its answers mean beyond their body.

``ApiTransport`` sends a request with the caller's token and turns every failure into a
``ClientError`` carrying the HTTP status and the server's problem document, so callers can show
the server's own words; it keeps the ``Warning`` headers of the answers that succeeded, for the
CLI to print. ``StreamjobsClient`` (``client.operations``) names the API's operations on top.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx

DEFAULT_SERVER = "http://127.0.0.1:8040"
CONFLICT_ATTEMPTS = 5
"""How often ``retry_on_conflict`` tries a read-then-write that others keep changing under it."""

T = TypeVar("T")
_WARNING = re.compile(r'\s*\d{3}\s+\S+\s+(".*")\s*')
"""A ``Warning`` header: code, agent, then the text as a JSON string (see api/conventions.py)."""


class ClientError(Exception):
    """A request failed: ``status`` is None when the server could not be reached at all."""

    def __init__(self, message: str, *, status: int | None = None, problem: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem if isinstance(problem, dict) else {}

    @property
    def field_errors(self) -> list[str]:
        return [
            f"{item.get('path')}: {item.get('message')}" if item.get("path") else item["message"]
            for item in self.problem.get("errors", [])
            if isinstance(item, dict) and "message" in item
        ]

    @property
    def is_invalid_input(self) -> bool:
        return self.status in (400, 422)


class ApiTransport:
    """Sends requests to one streamjobs server with one access token."""

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.server = server.rstrip("/")
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout, transport=transport
        )
        self._warnings: list[str] = []

    def take_warnings(self) -> list[str]:
        """The warnings the server gave with its answers since the last call, oldest first:
        what succeeded but deserves its user's attention (``Warning`` headers)."""
        taken, self._warnings = self._warnings, []
        return taken

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _apply(
        self, collection: str, manifest: dict[str, Any], key: str
    ) -> tuple[str, dict[str, Any]]:
        path = item_path(collection, manifest["metadata"]["name"])
        answer = self._json("PUT", path, json=manifest)
        return answer["result"], answer[key]

    def _list(self, collection: str, filters: dict[str, str | int | None]) -> dict[str, Any]:
        params = {key: value for key, value in filters.items() if value is not None}
        return self._json("GET", collection, params=params)

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = self._request(method, path, **kwargs).json()
        return body

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ClientError(f"cannot reach the server at {self.server}: {error}") from error
        if response.is_success:
            self._warnings += _warnings_of(response)
            return response
        raise _error_from(response)


def _warnings_of(response: httpx.Response) -> list[str]:
    warnings = []
    for header in response.headers.get_list("Warning"):
        match = _WARNING.fullmatch(header)
        try:
            warnings.append(str(json.loads(match.group(1))) if match else header)
        except ValueError:
            warnings.append(header)
    return warnings


def retry_on_conflict(change: Callable[[], T], *, attempts: int = CONFLICT_ATTEMPTS) -> T:
    """Run ``change`` (a read, then a write naming the version it read) again while its write
    loses to someone else's change, as kubectl's edits do; the last 409 is raised."""
    for _ in range(attempts - 1):
        try:
            return change()
        except ClientError as error:
            if error.status != 409:
                raise
    return change()


def if_match(resource_version: str | None) -> dict[str, str]:
    """The header that makes a write apply only to ``resource_version`` (none: to any)."""
    return {} if resource_version is None else {"If-Match": f'"{resource_version}"'}


def item_path(collection: str, name: str) -> str:
    """The path of the item ``name`` of ``collection``, the name quoted whole."""
    return f"{collection}/{quote(name, safe='')}"


def _error_from(response: httpx.Response) -> ClientError:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if isinstance(problem, dict) and problem.get("detail"):
        message = str(problem["detail"])
    else:
        message = f"{response.status_code} {response.reason_phrase}: {response.text[:500]}"
    return ClientError(message, status=response.status_code, problem=problem)
