"""Sign in with a user name and a password; sign out.

Sign-in acts on no session, so it has no CSRF token to check; what stops another site from
signing a visitor into the site's own account of the attacker (login CSRF) is the browser's word
on where the form came from: a sign-in whose ``Origin`` is not this server's (its public URL, or
the host the request was sent to), or without one that the browser marks ``Sec-Fetch-Site:
cross-site``, is refused. Clients that are not browsers send neither and are let through.

A password check is Argon2 work, tens of milliseconds of CPU and memory: it runs in a worker
thread, at most ``sign_in_concurrency`` at a time (a limiter of the application's own), and the
attempts waiting for their turn hold no thread. So a burst of sign-ins queues behind itself and
never slows down the other requests, which keep the event loop and the thread pool.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

import anyio
from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from streamjobs.domain.errors import Forbidden, TooManyAttempts, Unauthenticated
from streamjobs.http.sessions import (
    COOKIE,
    clear_session_cookie,
    services_of,
    set_session_cookie,
)
from streamjobs.services.web_sessions import NewSession
from streamjobs.web.pages import render

signin_router = APIRouter()
"""Sign-in needs no CSRF token: it acts on no session (one it replaces is ended); its origin is
checked instead (``same_origin_only``)."""
router = APIRouter()
OTHER_SITE = "the sign-in form was sent from another site; sign in on this server's own page"


def same_origin_only(request: Request) -> None:
    """Refuse (403) a sign-in the browser says came from another site."""
    origin = request.headers.get("origin")
    if origin is None:
        if request.headers.get("sec-fetch-site") == "cross-site":
            raise Forbidden(OTHER_SITE)
        return
    if origin.rstrip("/").lower() not in _own_origins(request):
        raise Forbidden(OTHER_SITE)


def _own_origins(request: Request) -> set[str]:
    public = urlsplit(services_of(request).settings.resolved_public_url)
    own = {f"{public.scheme}://{public.netloc}".lower()}
    if host := request.headers.get("host"):
        own.add(f"{request.url.scheme}://{host}".lower())
    return own


@signin_router.get("/signin")
def signin_page(request: Request, next: str = "/") -> Response:
    return render(request, "signin.html", next=_local(next), error=None, user="")


@signin_router.post("/signin", dependencies=[Depends(same_origin_only)])
async def signin(
    request: Request,
    user: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
) -> Response:
    address = request.client.host if request.client else None
    try:
        session = await anyio.to_thread.run_sync(
            _sign_in, request, user, password, address, limiter=_password_checks(request)
        )
        if replaced := request.cookies.get(COOKIE):
            await run_in_threadpool(services_of(request).sessions.end, replaced)
    except (Unauthenticated, TooManyAttempts) as error:
        return await _refused(request, error, user=user, next=next)
    response = RedirectResponse(_local(next), status_code=303)
    set_session_cookie(request, response, session, now=services_of(request).clock.now())
    return response


@router.post("/signout")
def signout(request: Request) -> Response:
    """End the session (its CSRF token is checked like every change's)."""
    secret = request.cookies.get(COOKIE)
    if secret:
        services_of(request).sessions.end(secret)
    response = RedirectResponse("/signin", status_code=303)
    clear_session_cookie(response)
    return response


def _sign_in(request: Request, user: str, password: str, address: str | None) -> NewSession:
    services = services_of(request)
    signed_in = services.sign_in.sign_in(user, password, address=address)
    return services.sessions.start(signed_in.user_id)


def _password_checks(request: Request) -> anyio.CapacityLimiter:
    """The application's limiter of concurrent password checks, made on first use (on the
    event loop, which has no other thread to race with)."""
    state = request.app.state
    limiter: anyio.CapacityLimiter | None = getattr(state, "password_checks", None)
    if limiter is None:
        limiter = anyio.CapacityLimiter(services_of(request).settings.sign_in_concurrency)
        state.password_checks = limiter
    return limiter


async def _refused(
    request: Request, error: Unauthenticated | TooManyAttempts, *, user: str, next: str
) -> Response:
    """The form again, saying why; 429 with ``Retry-After`` when the attempt must wait."""
    status = 401
    headers = {}
    if isinstance(error, TooManyAttempts):
        status = 429
        if error.retry_after_seconds is not None:
            headers["Retry-After"] = str(error.retry_after_seconds)
    response = await run_in_threadpool(
        render,
        request,
        "signin.html",
        status_code=status,
        next=_local(next),
        error=error.detail,
        user=user,
    )
    response.headers.update(headers)
    return response


def _local(target: str) -> str:
    """Only a path on this server: an open redirect would let a link send people elsewhere."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
