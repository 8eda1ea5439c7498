"""Who is calling: a bearer token on every ``/api`` route, or the web UI's signed-in session.

Scripts and the CLI send ``Authorization: Bearer <token>``. The web UI's own pages call the same
API from the browser with their session cookie; a request that changes something must then carry
the session's CSRF token in ``X-CSRF-Token``, so another site cannot make the browser do it.
"""

from __future__ import annotations

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Unauthenticated
from streamjobs.http.sessions import COOKIE, require_csrf, services_of, session_of

__all__ = ["require_actor", "services_of"]


async def require_actor(request: Request) -> Actor:
    """The authenticated caller of this request, or 401.

    Asynchronous, so that a token believed recently (``IdentityService.believed``) costs no trip
    through the thread pool; whatever reads the store runs there.
    """
    source = request.client.host if request.client else None
    header = request.headers.get("authorization")
    if not header:
        session = None
        if COOKIE in request.cookies:
            session = await run_in_threadpool(session_of, request)
        if session is None:
            raise Unauthenticated("this route needs an 'Authorization: Bearer <token>' header")
        await require_csrf(request)
        return Actor(principal=session.principal, source=source)
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    identity = services_of(request).identity
    principal = identity.believed(token.strip())
    if principal is None:
        principal = await run_in_threadpool(identity.authenticate, token.strip())
    return Actor(principal=principal, source=source)
