"""``/api/v1/users/{name}/unlock`` and ``/api/v1/users/{name}/sessions``: lift a lockout after too
many failed sign-ins, and end every web session of a user ("sign out everywhere")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from streamjobs.api.auth import require_actor, services_of
from streamjobs.domain.access import Actor

USER = "/api/v1/users/{name}"
router = APIRouter(tags=["users and groups"])


@router.post(
    USER + "/unlock",
    status_code=204,
    summary="Let a user sign in again after a lockout, forgetting their failed sign-ins",
)
def unlock_user(name: str, request: Request, actor: Actor = Depends(require_actor)) -> Response:
    services_of(request).sign_in.unlock(name, actor=actor)
    return Response(status_code=204)


@router.delete(USER + "/sessions", summary="End every web session of a user (sign out everywhere)")
def end_sessions(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    ended = services_of(request).sessions.end_everywhere(name, actor=actor)
    return {"name": name, "endedSessions": ended}
