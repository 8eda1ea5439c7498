"""Every error leaves the API as ``application/problem+json`` (RFC 9457), mapped here in one place.

Typed errors from the services become their HTTP status; request-shape errors from FastAPI become
422 with the field path of each problem; anything unexpected is still a problem document.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from streamjobs.domain.errors import (
    AlreadyExists,
    Conflict,
    FieldConflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    StoreUnavailable,
    StreamjobsError,
    TooManyAttempts,
    Unauthenticated,
)
from streamjobs.launch.worker_logs import LogUnavailable

PROBLEM_JSON = "application/problem+json"
API_PREFIXES = ("/api/", "/healthz", "/metrics")

PageRenderer = Callable[[Request, int, str, str, list[FieldError] | None], Response]
"""Renders an error on a web page (the web UI installs one); API routes always get problems."""
PROBLEM_TYPE_BASE = "https://streamjobs.io/problems/"

log = logging.getLogger(__name__)


class UnreadableBody(InvalidInput):
    """The request body is not JSON or YAML at all."""

    title = "Unreadable request body"


STATUS_OF: dict[type[StreamjobsError], int] = {
    UnreadableBody: 400,
    InvalidInput: 422,
    NotFound: 404,
    AlreadyExists: 409,
    Conflict: 409,
    Unauthenticated: 401,
    Forbidden: 403,
    StoreUnavailable: 503,
    TooManyAttempts: 429,
    LogUnavailable: 502,
}


FULL_DISK_ERRORS = {
    errno.ENOSPC: "the server's disk is full",
    errno.EDQUOT: "the server's disk quota is used up",
    errno.EROFS: "the server's file system is read-only",
}
"""Failures to write a file (in STREAMJOBS_HOME) that answer 503 rather than 500."""


def status_of(error: StreamjobsError) -> int:
    for kind in type(error).__mro__:
        if kind in STATUS_OF:
            return STATUS_OF[kind]
    return 400


def problem(
    request: Request,
    *,
    status: int,
    title: str,
    detail: str,
    errors: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    renderer: PageRenderer | None = getattr(request.app.state, "page_renderer", None)
    if renderer is not None and not request.url.path.startswith(API_PREFIXES):
        page = renderer(request, status, title, detail, errors)
        if headers and "Retry-After" in headers:
            page.headers["Retry-After"] = headers["Retry-After"]
        return page
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + title.lower().replace(" ", "-"),
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if errors:
        body["errors"] = [{"path": e.path, "message": e.message} for e in errors]
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


async def _on_streamjobs_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StreamjobsError)
    status = status_of(error)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(error, StoreUnavailable):
        headers = {"Retry-After": str(error.retry_after_seconds)}
    if isinstance(error, TooManyAttempts) and error.retry_after_seconds is not None:
        headers = {"Retry-After": str(error.retry_after_seconds)}
    errors = list(error.errors) if isinstance(error, InvalidInput | FieldConflict) else None
    return problem(
        request,
        status=status,
        title=error.title,
        detail=error.detail,
        errors=errors,
        headers=headers,
    )


async def _on_request_validation(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    errors = [
        FieldError(".".join(str(part) for part in item["loc"]), item["msg"])
        for item in error.errors()
    ]
    return problem(
        request,
        status=422,
        title=InvalidInput.title,
        detail="; ".join(str(e) for e in errors),
        errors=errors,
    )


async def _on_http_exception(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return problem(
        request,
        status=error.status_code,
        title=_reason(error.status_code),
        detail=str(error.detail),
        headers=dict(error.headers) if error.headers else None,
    )


async def _on_os_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, OSError)
    cause = FULL_DISK_ERRORS.get(error.errno or 0)
    if cause is None:
        return await _on_unexpected(request, error)
    log.warning("%s %s: %s", request.method, request.url.path, error)
    outage = StoreUnavailable(f"{cause}: the change could not be saved", retry_after_seconds=60)
    return await _on_streamjobs_error(request, outage)


async def _on_unexpected(request: Request, error: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(
        request,
        status=500,
        title="Internal server error",
        detail="the server failed unexpectedly; its log has the details",
    )


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(StreamjobsError, _on_streamjobs_error)
    app.add_exception_handler(RequestValidationError, _on_request_validation)
    app.add_exception_handler(HTTPException, _on_http_exception)
    app.add_exception_handler(OSError, _on_os_error)
    app.add_exception_handler(Exception, _on_unexpected)
