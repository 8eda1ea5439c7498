"""The web session of a request, the cookie that carries it, and the CSRF check of every change
made with it.

The cookie holds only an opaque secret; the session itself (whose, until when, its CSRF token) is
in the store, so ending it takes effect on the next request (``services.web_sessions``). The
cookie is HttpOnly and SameSite=Lax. A request that changes something (any method but GET, HEAD,
OPTIONS) and is authenticated by a session must also carry the session's CSRF token, in the form
field ``csrf`` or the ``X-CSRF-Token`` header (on ``/api`` routes, which read their bodies
themselves, only the header): ``require_csrf`` checks it once for every route it guards.
Requests with an ``Authorization`` header are not the browser's own and need no token.
"""

from __future__ import annotations

import hmac
from datetime import datetime

from fastapi import Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from streamjobs.domain.errors import Forbidden
from streamjobs.services.container import Services
from streamjobs.services.web_sessions import LiveSession, NewSession

COOKIE = "streamjobs_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
API_PATHS = "/api/"
_LOOKED_UP = "web_session_looked_up"
_SESSION = "web_session"


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def session_of(request: Request) -> LiveSession | None:
    """The request's live session, or None; looked up in the store once per request (it reads
    the store: call it from a thread, not the event loop)."""
    state = request.state
    if getattr(state, _LOOKED_UP, False):
        session: LiveSession | None = getattr(state, _SESSION)
        return session
    secret = request.cookies.get(COOKIE)
    session = services_of(request).sessions.find(secret) if secret else None
    setattr(state, _SESSION, session)
    setattr(state, _LOOKED_UP, True)
    return session


def session_found(request: Request) -> LiveSession | None:
    """The session ``session_of`` already found for this request, without reading the store:
    None when none was looked up, or the lookup failed (an error page must not fail again)."""
    session: LiveSession | None = getattr(request.state, _SESSION, None)
    return session


async def require_csrf(request: Request) -> None:
    """Refuse (403) a change made with a session that does not carry the session's CSRF token.
    A request without a live session passes: the route itself refuses it, or needs none."""
    if request.method in SAFE_METHODS or request.headers.get("authorization"):
        return
    if COOKIE not in request.cookies:
        return
    session = await run_in_threadpool(session_of, request)
    if session is None:
        return
    check_csrf(session, await _submitted_token(request))


def check_csrf(session: LiveSession, submitted: str | None) -> None:
    """Refuse a change whose CSRF token is not the session's."""
    if not submitted or not hmac.compare_digest(submitted.encode(), session.csrf.encode()):
        raise Forbidden("the form is stale or came from another site (CSRF token mismatch)")


async def _submitted_token(request: Request) -> str | None:
    header = request.headers.get(CSRF_HEADER)
    if header is not None:
        return header
    content_type = request.headers.get("content-type", "")
    if request.url.path.startswith(API_PATHS) or not content_type.startswith(FORM_TYPES):
        return None  # an /api route reads its body itself: the token is only ever the header
    # Parsed once: FastAPI reads the same cached form for the route's own fields.
    value = (await request.form()).get(CSRF_FIELD)
    return value if isinstance(value, str) else None


def set_session_cookie(
    request: Request, response: Response, session: NewSession, *, now: datetime
) -> None:
    """Give the browser the cookie of a session just started."""
    response.set_cookie(
        COOKIE,
        session.secret,
        max_age=max(1, int((session.expires_at - now).total_seconds())),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE)
