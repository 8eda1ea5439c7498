"""Every request body is bounded before it is read: a pure ASGI middleware counts the body as it
streams in and answers 413 as soon as it passes its route's limit.

Counting here, under every route, means no reader (``request.body()``, FastAPI's own body and form
parsing, a web form) can buffer more than the limit, whoever calls it. A body whose
``Content-Length`` already announces more is refused before a byte of it is read, and an ``/api``
write that carries no credentials at all, or a bearer token that is none, is refused (401)
before its body is read. What a route
does once the limit is passed is dropped: the client gets the 413, never a half-read answer.

An answer given before the whole body has come in (a refusal here, or a route's that did not read
it) says ``Connection: close``: the server then closes the connection once it has answered,
instead of reading and dropping the rest of the body for as long as the client sends it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from streamjobs.api.errors import API_PREFIXES, PROBLEM_JSON, PROBLEM_TYPE_BASE
from streamjobs.domain.access import Principal
from streamjobs.domain.errors import StreamjobsError, Unauthenticated
from streamjobs.settings import Settings

REPORTS_PATH = re.compile(r"^/api/v1/applications/[^/]+/reports/?$")
PIPELINE_CHECK_PATH = "/jobs/validate-pipeline"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


@dataclass(frozen=True)
class BodyLimits:
    """The largest body, in bytes, of each family of routes."""

    api: int
    reports: int
    pipeline_check: int
    forms: int

    @classmethod
    def of(cls, settings: Settings) -> BodyLimits:
        return cls(
            api=settings.max_body_bytes,
            reports=settings.max_report_body_bytes,
            pipeline_check=settings.max_pipeline_check_body_bytes,
            forms=settings.max_form_body_bytes,
        )

    def for_path(self, path: str) -> tuple[str, int]:
        """The name of the limit that applies to ``path``'s body (the setting it comes from,
        without its ``max_`` prefix), and its value."""
        if REPORTS_PATH.match(path):
            return "report_body_bytes", self.reports
        if path.startswith(API_PREFIXES):
            return "body_bytes", self.api
        if path.rstrip("/") == PIPELINE_CHECK_PATH:
            return "pipeline_check_body_bytes", self.pipeline_check
        return "form_body_bytes", self.forms


class BodyTooLarge(Exception):
    """Raised to the route reading a body that has passed its limit (a route that catches it
    answers nothing: the middleware answers 413 in its place)."""


class BearerTokens(Protocol):
    """Who a bearer token stands for (``IdentityService``)."""

    def believed(self, token: str) -> Principal | None:
        """The principal of a token found valid recently, without reading the store."""

    def authenticate(self, token: str) -> Principal:
        """The principal of a valid token; ``Unauthenticated`` otherwise."""


class BodyLimitMiddleware:
    """Refuses, with a problem document, a request body past its route's limit (413) and an
    ``/api`` write with no credentials or a bearer token that is none (401), before the route
    reads the body."""

    def __init__(self, app: ASGIApp, *, limits: BodyLimits, tokens: BearerTokens | None) -> None:
        self.app = app
        self.limits = limits
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        name, limit = self.limits.for_path(path)
        headers = Headers(scope=scope)
        announced = _content_length(headers)
        has_body = _has_body(headers, announced)
        if announced is not None and announced > limit:
            await _too_large(scope, send, name, limit)
            return
        if _lacks_credentials(scope["method"], path, headers) or not await self._believable(
            scope["method"], path, headers
        ):
            await _unauthenticated(scope, send, close=has_body)
            return
        counted = _CountedBody(receive, send, limit, has_body=has_body)
        try:
            await self.app(scope, counted.receive, counted.send)
        except BodyTooLarge:
            if counted.response_started:
                raise
        if counted.overflowed and not counted.response_started:
            await _too_large(scope, send, name, limit)

    async def _believable(self, method: str, path: str, headers: Headers) -> bool:
        """False for an ``/api`` write whose bearer token stands for nobody (a driver's report
        token is its route's to check). A route's own answer covers the rest, a store that
        cannot answer now included."""
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if (
            self.tokens is None
            or method in SAFE_METHODS
            or not path.startswith("/api/")
            or REPORTS_PATH.match(path)
            or scheme.lower() != "bearer"
            or not token.strip()
            or self.tokens.believed(token.strip()) is not None
        ):
            return True
        try:
            await run_in_threadpool(self.tokens.authenticate, token.strip())
        except Unauthenticated:
            return False
        except StreamjobsError:
            return True
        return True


class _CountedBody:
    """``receive`` and ``send`` of one request, counting the body that comes in and holding back
    the route's answer once the body has passed ``limit``; an answer that starts before the body
    has all come in closes the connection."""

    def __init__(self, receive: Receive, send: Send, limit: int, *, has_body: bool) -> None:
        self._receive = receive
        self._send = send
        self._limit = limit
        self._received = 0
        self._body_complete = not has_body
        self.overflowed = False
        self.response_started = False

    async def receive(self) -> Message:
        if self.overflowed:
            raise BodyTooLarge
        message = await self._receive()
        if message["type"] == "http.request":
            self._body_complete = not message.get("more_body", False)
            self._received += len(message.get("body", b""))
            if self._received > self._limit:
                self.overflowed = True
                raise BodyTooLarge
        return message

    async def send(self, message: Message) -> None:
        if self.overflowed and not self.response_started:
            return
        if message["type"] == "http.response.start":
            self.response_started = True
            if not self._body_complete:
                message = {**message, "headers": _closing(message.get("headers", []))}
        await self._send(message)


def _content_length(headers: Headers) -> int | None:
    value = headers.get("content-length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


def _has_body(headers: Headers, announced: int | None) -> bool:
    """Whether the request comes with a body (announced, or sent in chunks)."""
    return bool(announced) or "transfer-encoding" in headers


def _closing(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` saying ``Connection: close`` (in place of any other ``Connection``)."""
    kept = [(name, value) for name, value in headers if name.lower() != b"connection"]
    return [*kept, (b"connection", b"close")]


def _lacks_credentials(method: str, path: str, headers: Headers) -> bool:
    """An ``/api`` write (healthz aside) with neither a bearer token nor a session cookie: it
    can only be refused, so its body is not worth reading."""
    if method in SAFE_METHODS or not path.startswith("/api/"):
        return False
    return "authorization" not in headers and "cookie" not in headers


async def _too_large(scope: Scope, send: Send, name: str, limit: int) -> None:
    detail = f"the request body is larger than {limit} bytes, the limit of this route"
    errors = [{"path": "body", "message": f"larger than {limit} bytes (max_{name})"}]
    await _problem(scope, send, 413, "Content too large", detail, errors=errors, close=True)


async def _unauthenticated(scope: Scope, send: Send, *, close: bool) -> None:
    detail = "this route needs an 'Authorization: Bearer <token>' header"
    extra = [(b"www-authenticate", b"Bearer")]
    await _problem(
        scope, send, 401, Unauthenticated.title, detail, extra_headers=extra, close=close
    )


async def _problem(
    scope: Scope,
    send: Send,
    status: int,
    title: str,
    detail: str,
    *,
    errors: list[dict[str, str]] | None = None,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
    close: bool = False,
) -> None:
    """Answers with a problem document shaped like ``api.errors.problem``'s; ``close`` when the
    body has not all come in: the connection is closed once this is sent."""
    document: dict[str, object] = {
        "type": PROBLEM_TYPE_BASE + title.lower().replace(" ", "-"),
        "title": title,
        "status": status,
        "detail": detail,
        "instance": scope["path"],
    }
    if errors:
        document["errors"] = errors
    body = json.dumps(document, separators=(",", ":")).encode()
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        *(extra_headers or []),
    ]
    if close:
        headers = _closing(headers)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
