"""What every page shares: the signed-in actor, rendering with the layout's context, CSRF checks,
and error pages (a page that needs a session sends the person to Sign in instead)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from streamjobs import __version__
from streamjobs.domain.access import Actor, DomainPermission, Principal, has_domain_permission
from streamjobs.domain.errors import FieldError, Forbidden, StreamjobsError, Unauthenticated
from streamjobs.services.container import Services
from streamjobs.web.sessions import COOKIE, Session, SessionCodec

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"


class SignInRequired(Unauthenticated):
    """A page was asked for without a session; the person is sent to Sign in."""


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def codec_of(request: Request) -> SessionCodec:
    codec: SessionCodec = request.app.state.sessions
    return codec


def session_of(request: Request) -> Session | None:
    now = services_of(request).clock.now()
    return codec_of(request).decode(request.cookies.get(COOKIE), now=now)


def page_session(request: Request) -> Session:
    """The request's session; ``SignInRequired`` without one (dependency of every page)."""
    session = session_of(request)
    if session is None:
        raise SignInRequired("sign in to see this page")
    return session


def page_actor(request: Request) -> Actor:
    """The signed-in person, as the services see them."""
    session = page_session(request)
    principal = services_of(request).identity.principal(session.user)
    actor = Actor(principal=principal, source=request.client.host if request.client else None)
    request.state.actor = actor
    return actor


def settings_links(principal: Principal | None) -> list[tuple[str, str, str]]:
    """The layout's settings links (key, path, label) ``principal`` may use; the services refuse
    the others anyway, so this only spares people links that would answer 403."""
    if principal is None:
        return []
    links = [
        ("tokens", "/settings/tokens", "Access tokens"),
        ("secrets", "/settings/secrets", "Secrets"),
    ]
    if has_domain_permission(principal, DomainPermission.MANAGE_USERS) or has_domain_permission(
        principal, DomainPermission.MANAGE_BUNDLES
    ):
        links.append(("users", "/settings/users", "Users & groups"))
    links.append(("bundles", "/settings/bundles", "Bundles"))
    links.append(("node-types", "/settings/node-types", "Node types"))
    if principal.is_admin:
        links.append(("audit", "/settings/audit", "Audit"))
    return links


def check_csrf(request: Request, session: Session, submitted: str | None) -> None:
    """Refuse a change whose CSRF token (form field or header) is not the session's."""
    given = submitted or request.headers.get(CSRF_HEADER)
    if not given or given != session.csrf:
        raise Forbidden("the form is stale or came from another site (CSRF token mismatch)")


def render(
    request: Request, template: str, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """``template`` in the layout, with the session, its CSRF token and the server URL."""
    session = session_of(request)
    settings = services_of(request).settings
    return TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "session": session,
            "csrf": session.csrf if session else "",
            "server_url": settings.resolved_public_url,
            "version": __version__,
            "settings_links": settings_links(_principal_of(request, session)),
            **context,
        },
        status_code=status_code,
    )


def _principal_of(request: Request, session: Session | None) -> Principal | None:
    """The signed-in principal for the layout: the page's actor, else looked up (an error page
    of a route that never asked for one); None without a session."""
    if session is None:
        return None
    actor: Actor | None = getattr(request.state, "actor", None)
    if actor is not None:
        return actor.principal
    try:
        return services_of(request).identity.principal(session.user)
    except StreamjobsError:
        return None


def render_error(
    request: Request, status: int, title: str, detail: str, errors: list[FieldError] | None
) -> Response:
    """The page for an error on a web route: Sign in for 401, an error page otherwise."""
    if status == 401:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)
    return render(
        request,
        "error.html",
        status_code=status,
        status=status,
        title=title,
        detail=detail,
        errors=errors or [],
    )
