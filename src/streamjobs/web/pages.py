"""What every page shares: the signed-in actor, rendering with the layout's context, and error
pages (a page that needs a session sends the person to Sign in instead). The session itself and
its CSRF check are the HTTP edge's (``streamjobs.http.sessions``).

An error page is rendered on the event loop, often because the store failed: it shows only the
session this request already found and never reads the store itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from streamjobs import __version__, formatting
from streamjobs.domain.access import Actor, DomainPermission, Principal, has_domain_permission
from streamjobs.domain.errors import FieldError, Unauthenticated
from streamjobs.domain.states import label
from streamjobs.http.server_role import supervision_of
from streamjobs.http.sessions import services_of, session_found, session_of
from streamjobs.services.web_sessions import LiveSession
from streamjobs.web.notices import clear_notices, pending_notices

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
TEMPLATES.env.filters.update(
    label=label,
    duration=formatting.duration,
    size=formatting.size,
    memory=formatting.memory,
    rate=formatting.rate,
    milliseconds=formatting.milliseconds,
    count=formatting.count,
)
"""Every page formats states and figures with these filters (``{{ app.state | label }}``,
``{{ seconds | duration }}``): the one set of names and units the CLI uses too."""

__all__ = [
    "TEMPLATES",
    "SignInRequired",
    "page_actor",
    "page_session",
    "render",
    "render_error",
    "services_of",
    "settings_links",
]


class SignInRequired(Unauthenticated):
    """A page was asked for without a session; the person is sent to Sign in."""


def page_session(request: Request) -> LiveSession:
    """The request's session; ``SignInRequired`` without one (dependency of every page)."""
    session = session_of(request)
    if session is None:
        raise SignInRequired("sign in to see this page")
    return session


def page_actor(request: Request) -> Actor:
    """The signed-in person, as the services see them."""
    session = page_session(request)
    source = request.client.host if request.client else None
    actor = Actor(principal=session.principal, source=source)
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
    links.append(("notifications", "/settings/notifications", "Notifications"))
    if principal.is_admin:
        links.append(("audit", "/settings/audit", "Audit"))
    return links


def render(
    request: Request, template: str, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """``template`` in the layout, with the session, its CSRF token, the server URL and the
    server that runs the supervisor (reads the store: call it from a thread)."""
    leader = supervision_of(request).leader()
    return _in_layout(
        request, template, session_of(request), status_code, {"leader": leader, **context}
    )


def _in_layout(
    request: Request,
    template: str,
    session: LiveSession | None,
    status_code: int,
    context: dict[str, Any],
) -> HTMLResponse:
    settings = services_of(request).settings
    supervision = supervision_of(request)
    response = TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "session": session,
            "csrf": session.csrf if session else "",
            "server_url": settings.resolved_public_url,
            "version": __version__,
            "server_name": supervision.server_name,
            "server_role": supervision.role(),
            "settings_links": settings_links(session.principal if session else None),
            "notices": pending_notices(request),
            **context,
        },
        status_code=status_code,
    )
    clear_notices(request, response)
    return response


def render_error(
    request: Request, status: int, title: str, detail: str, errors: list[FieldError] | None
) -> Response:
    """The page for an error on a web route: Sign in for 401, an error page otherwise (with the
    session the request found, if any; the store is not asked again)."""
    if status == 401:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if request.headers.get("HX-Request") == "true":
            # An htmx refresh: the whole page goes to Sign in, and comes back to itself after.
            page = urlsplit(request.headers.get("HX-Current-URL", ""))
            target = page.path + (f"?{page.query}" if page.query else "") if page.path else "/"
            signin = f"/signin?next={quote(target, safe='')}"
            return Response(status_code=204, headers={"HX-Redirect": signin})
        return RedirectResponse(f"/signin?next={quote(target, safe='')}", status_code=303)
    context = {"status": status, "title": title, "detail": detail, "errors": errors or []}
    return _in_layout(request, "error.html", session_found(request), status, context)
