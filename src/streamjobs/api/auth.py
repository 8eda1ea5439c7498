"""Bearer-token authentication: every ``/api`` route needs ``Authorization: Bearer <token>``."""

from __future__ import annotations

from fastapi import Request

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Unauthenticated
from streamjobs.services.container import Services


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def require_actor(request: Request) -> Actor:
    """The authenticated caller of this request, or 401."""
    header = request.headers.get("authorization")
    if not header:
        raise Unauthenticated("this route needs an 'Authorization: Bearer <token>' header")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    principal = services_of(request).identity.authenticate(token.strip())
    source = request.client.host if request.client else None
    return Actor(principal=principal, source=source)
