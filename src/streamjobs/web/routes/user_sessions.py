"""Settings → Users & groups: a user manager unlocks a user's sign-in after too many failures,
or signs a user out of every web session (as ``/api/v1/users/{name}/unlock`` and
``/api/v1/users/{name}/sessions`` do)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.web.pages import page_actor, services_of
from streamjobs.web.routes.people import USERS_PAGE
from streamjobs.web.settings_forms import back_to

router = APIRouter()


@router.post(USERS_PAGE + "/{name}/unlock")
def unlock_user(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
    services_of(request).sign_in.unlock(name, actor=actor)
    return back_to(USERS_PAGE, "users", done="user-unlocked", name=name)


@router.post(USERS_PAGE + "/{name}/sign-out-everywhere")
def sign_out_everywhere(
    request: Request, name: str, actor: Actor = Depends(page_actor)
) -> Response:
    services_of(request).sessions.end_everywhere(name, actor=actor)
    if name == actor.name:
        return back_to("/signin")
    return back_to(USERS_PAGE, "users", done="user-signed-out", name=name)
