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
from streamjobs.services.container import Services
from streamjobs.web.pages import SAFE_METHODS, check_csrf, session_of


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def require_actor(request: Request) -> Actor:
    """The authenticated caller of this request, or 401.

    Asynchronous, so that a token believed recently (``IdentityService.believed``) costs no trip
    through the thread pool; whatever reads the store runs there.
    """
    source = request.client.host if request.client else None
    header = request.headers.get("authorization")
    if not header:
        session = session_of(request) if hasattr(request.app.state, "sessions") else None
        if session is None:
            raise Unauthenticated("this route needs an 'Authorization: Bearer <token>' header")
        if request.method not in SAFE_METHODS:
            check_csrf(request, session, None)
        principal = await run_in_threadpool(services_of(request).identity.principal, session.user)
        return Actor(principal=principal, source=source)
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    identity = services_of(request).identity
    principal = identity.believed(token.strip()) or await run_in_threadpool(
        identity.authenticate, token.strip()
    )
    return Actor(principal=principal, source=source)
