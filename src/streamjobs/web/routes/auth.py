"""Sign in with a user name and password; sign out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.errors import Unauthenticated
from streamjobs.web.pages import check_csrf, codec_of, page_session, render, services_of
from streamjobs.web.sessions import COOKIE, LIFETIME

router = APIRouter()


@router.get("/signin")
def signin_page(request: Request, next: str = "/") -> Response:
    return render(request, "signin.html", next=_local(next), error=None, user="")


@router.post("/signin")
def signin(
    request: Request,
    user: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
) -> Response:
    services = services_of(request)
    try:
        principal = services.identity.sign_in(user, password)
    except Unauthenticated as error:
        return render(
            request,
            "signin.html",
            status_code=401,
            next=_local(next),
            error=error.detail,
            user=user,
        )
    codec = codec_of(request)
    session = codec.new(principal.name, now=services.clock.now())
    response = RedirectResponse(_local(next), status_code=303)
    response.set_cookie(
        COOKIE,
        codec.encode(session),
        max_age=int(LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/signout")
def signout(request: Request, csrf: Annotated[str, Form()] = "") -> Response:
    check_csrf(request, page_session(request), csrf)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE)
    return response


def _local(target: str) -> str:
    """Only a path on this server: an open redirect would let a link send people elsewhere."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
