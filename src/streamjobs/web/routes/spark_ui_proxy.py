"""The driver's Spark UI, through the server, for whoever may see the application's job.

A driver serves its UI where its attempt records it: on 127.0.0.1 for a local driver, at the
advertised address of a client-mode one, on its worker for a cluster-mode one (host and port
recorded once the supervisor found them), which a browser often cannot reach.
``/applications/<id>/spark-ui/...`` forwards GET and HEAD to that address of the application's
live attempt and streams the answer back: never anywhere else, never the person's cookies or
credentials. Spark builds its links from the ``X-Forwarded-Context``
header (``UIUtils.uiRoot``), so they point back under the prefix; redirects are kept there too.

What the driver serves is the job's, and a job is not trusted (it can add pages to its UI), yet
the pages come from this server's origin. So they are served sandboxed: no popups, and neither
scripts, styles, images nor forms may reach anything of this server outside the prefix (the
policy below), and the driver may set no cookie. A policy's paths count only until a redirect,
so the driver's redirects are checked as a browser would read them (``local_location``).

The sandbox keeps ``allow-same-origin``: without it the page's origin is opaque, every request it
makes (Spark's scripts and styles, the REST calls that draw the Executors tab) is cross-site, the
session cookie (SameSite=Lax) is not sent and the proxy answers with Sign in. The cost: the page's
scripts can write cookies for this origin, so nothing the server shows trusts an unsigned cookie
(``web.notices`` signs its own).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import NotFound
from streamjobs.domain.states import AppState
from streamjobs.services.applications import ApplicationDetails
from streamjobs.web.pages import TEMPLATES, page_actor, render_error, services_of

router = APIRouter()

LOOPBACK = "127.0.0.1"
HOST = re.compile(r"[A-Za-z0-9.-]+(:[0-9]+)?|\[[0-9A-Fa-f:.]+\](:[0-9]+)?")
"""A Host header that can go into the page's policy as it is (anything else allows nothing)."""
TIMEOUT = httpx.Timeout(30.0, connect=3.0, pool=3.0)
"""Spark's pages answer in well under a second; a driver that hangs is given up on."""
DRIVER_STATES = frozenset({AppState.STARTING, AppState.RUNNING, AppState.TERMINATING})
"""States in which the application's latest attempt may have a driver serving its UI."""
FORWARDED_REQUEST_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "range",
        "user-agent",
        "x-requested-with",
    }
)
"""The only request headers the driver gets: no cookie, no authorization, no hop-by-hop."""
DROPPED_RESPONSE_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "set-cookie",
        "content-security-policy",
        "content-security-policy-report-only",
        "x-frame-options",
        "strict-transport-security",
        "service-worker-allowed",
        "access-control-allow-origin",
        "access-control-allow-credentials",
        "location",
        "cache-control",
    }
)
"""Hop-by-hop headers, and those a driver must not set for this server's origin."""
UNSENDABLE_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
"""Control characters, which no server may send in a header (the header is dropped)."""
NOT_VISIBLE_ASCII = re.compile(r"[^\x21-\x7e]+")
"""What a request's path may hold as it came (each character one byte) but a URL may not."""
UNSAFE_IN_LOCATION = re.compile(r"[^\x21-\x7e]|\\")
"""Anything in a redirect but visible ASCII (whitespace, controls, non-ASCII), and backslashes."""
ENCODED_SEPARATOR = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)
"""A dot, slash or backslash in disguise, which a browser or the server may decode."""
PATH_SEGMENT = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*")
"""A path segment that every URL parser reads alike (RFC 3986 ``segment``)."""


def spark_ui_prefix(application_id: str) -> str:
    """Where the application's Spark UI is served (its pages' links start with it)."""
    return f"/applications/{application_id}/spark-ui"


def spark_ui_link(application_id: str, state: AppState | str) -> str | None:
    """The Spark UI's address, to link to while the application runs; None otherwise. Pages
    call it as ``spark_ui_link(app.id, app.state)``; the link opens without an opener, so the
    driver's pages get no handle on the page that linked them."""
    return f"{spark_ui_prefix(application_id)}/" if state == AppState.RUNNING else None


TEMPLATES.env.globals["spark_ui_link"] = spark_ui_link


@router.get("/applications/{application_id}/spark-ui", include_in_schema=False)
def spark_ui_root(
    request: Request, application_id: str, actor: Actor = Depends(page_actor)
) -> Response:
    _live_driver(request, application_id, actor)
    return RedirectResponse(f"{spark_ui_prefix(application_id)}/", status_code=307)


@router.api_route("/applications/{application_id}/spark-ui/{path:path}", methods=["GET", "HEAD"])
async def spark_ui(
    request: Request, application_id: str, path: str, actor: Actor = Depends(page_actor)
) -> Response:
    """Forward one request to the driver's UI and stream its answer back."""
    host, port = await run_in_threadpool(_live_driver, request, application_id, actor)
    prefix = spark_ui_prefix(application_id)
    raw_path = request.scope.get("raw_path", b"").decode("latin-1")
    rest = raw_path[len(prefix) :] if raw_path.startswith(prefix + "/") else "/" + path
    target = driver_url(
        port, rest + (f"?{request.url.query}" if request.url.query else ""), host=host
    )
    headers = [
        (name, value)
        for name, value in request.headers.raw
        if name.decode("latin-1").lower() in FORWARDED_REQUEST_HEADERS
    ]
    headers.append((b"X-Forwarded-Context", prefix.encode("latin-1")))
    client = httpx.AsyncClient(timeout=TIMEOUT, trust_env=False, follow_redirects=False)
    upstream: httpx.Response | None = None

    async def close() -> None:
        with anyio.CancelScope(shield=True):  # also when the browser went away mid-answer
            if upstream is not None:
                await upstream.aclose()
            await client.aclose()

    try:
        upstream = await client.send(
            client.build_request(request.method, target, headers=headers), stream=True
        )
        answer_headers = _answer_headers(upstream, request, prefix, host, port)
    except httpx.HTTPError:
        await close()
        return _unavailable(request, f"The driver of application {application_id} did not answer")
    except BaseException:
        await close()
        raise
    if answer_headers is None:
        await close()
        return _unavailable(request, "The driver's UI redirected outside itself")
    return _DriverAnswer(
        _relay(upstream, send_body=request.method == "GET"),
        status_code=upstream.status_code,
        raw_headers=answer_headers,
        close=close,
    )


class _DriverAnswer(StreamingResponse):
    """The driver's answer streamed as it comes, its connection closed however the sending
    ends (done, the browser gone, an error)."""

    def __init__(
        self,
        content: AsyncIterator[bytes],
        *,
        status_code: int,
        raw_headers: list[tuple[bytes, bytes]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(content, status_code=status_code)
        self.raw_headers = raw_headers
        self._close = close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._close()


def driver_url(port: int, path_and_query: str, *, host: str = LOOPBACK) -> httpx.URL:
    """The driver's address (``host``:``port``) of a request's path and query as they came
    (bytes as latin-1: an HTTP server may let through bytes that an URL may not hold, which are
    percent-encoded)."""
    raw_path = NOT_VISIBLE_ASCII.sub(_percent_encoded, path_and_query).encode("ascii")
    return httpx.URL(scheme="http", host=host, port=port, path="/").copy_with(raw_path=raw_path)


def _percent_encoded(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("latin-1"))


def _live_driver(request: Request, application_id: str, actor: Actor) -> tuple[str, int]:
    """The UI host and port of the application's live attempt; ``NotFound`` when the person may
    not see the application (VIEW on its job) or it runs no driver now, or none whose UI is
    known (a cluster-mode driver whose worker has not said where yet)."""
    details: ApplicationDetails = services_of(request).applications.get(application_id, actor=actor)
    latest = details.latest_attempt
    if (
        details.application.state not in DRIVER_STATES
        or latest is None
        or latest.ended_at is not None
        or not latest.ui_port
        or (latest.submission_id is not None and not latest.driver_host)
    ):
        raise NotFound(
            "Spark UI of application",
            f"{application_id} (it is shown only while the application's driver runs)",
        )
    return latest.driver_host or LOOPBACK, latest.ui_port


async def _relay(upstream: httpx.Response, *, send_body: bool) -> AsyncIterator[bytes]:
    """The driver's answer as it comes."""
    try:
        if send_body:
            async for chunk in upstream.aiter_raw():
                yield chunk
    except httpx.HTTPError:
        return  # the driver went away mid-answer: the body ends where it got to


def _answer_headers(
    upstream: httpx.Response, request: Request, prefix: str, host: str, port: int
) -> list[tuple[bytes, bytes]] | None:
    """The driver's headers as the browser gets them (as bytes: a driver may send any); None if
    it redirects outside its UI."""
    headers = [
        (name, value)
        for name, value in upstream.headers.raw
        if name.decode("latin-1").lower() not in DROPPED_RESPONSE_HEADERS
        and not UNSENDABLE_VALUE.search(value)
    ]
    locations = [value for name, value in upstream.headers.raw if name.lower() == b"location"]
    if len(locations) > 1:
        return None
    if locations:
        requested = str(upstream.request.url)
        local = local_location(locations[0].decode("latin-1"), requested, prefix, port, host=host)
        if local is None:
            return None
        headers.append((b"Location", local.encode("ascii")))
    policy = content_policy(request.headers.get("host", ""), prefix)
    headers += [
        (b"Cache-Control", b"no-store"),
        (b"X-Content-Type-Options", b"nosniff"),
        (b"Referrer-Policy", b"same-origin"),
        (b"Content-Security-Policy", policy.encode("latin-1")),
    ]
    return headers


def local_location(
    location: str, requested: str, prefix: str, port: int, *, host: str = LOOPBACK
) -> str | None:
    """A driver's redirect (to ``requested``'s driver, at ``host``:``port``) as an address under
    ``prefix``; None when it leads off the driver's UI (another host or port) or could be read
    otherwise by a browser.

    A browser (WHATWG URL) reads ``\\`` as ``/``, drops tabs and newlines, and takes ``%2e``
    for a dot, where Python's parser does not: such a Location is refused outright, so the path
    checked here is the one the browser follows, and it stays under ``prefix``."""
    if UNSAFE_IN_LOCATION.search(location):
        return None
    try:
        absolute = urlsplit(urljoin(requested, location))
        absolute_port = absolute.port
    except ValueError:
        return None
    if absolute.scheme != "http" or absolute.hostname != host.strip("[]") or absolute_port != port:
        return None
    path = absolute.path or "/"
    if ENCODED_SEPARATOR.search(path):
        return None
    segments = path.split("/")[1:]
    if any(segment in {".", ".."} or not PATH_SEGMENT.fullmatch(segment) for segment in segments):
        return None
    if path == prefix or path.startswith(prefix + "/"):
        path = path[len(prefix) :] or "/"
    local = prefix + path
    return f"{local}?{absolute.query}" if absolute.query else local


def content_policy(host: str, prefix: str) -> str:
    """The policy of a proxied page: scripts run (Spark's pages need them) in a sandbox that
    opens no window, and load, fetch and submit only under ``prefix`` of this server (``host``
    as the browser named it); it loads no frame, worker or plugin."""
    scope = f"{host}{prefix}/" if HOST.fullmatch(host) else "'none'"
    return "; ".join(
        [
            "sandbox allow-scripts allow-same-origin allow-forms allow-downloads allow-modals",
            f"default-src {scope}",
            f"script-src {scope} 'unsafe-inline' 'unsafe-eval'",
            f"style-src {scope} 'unsafe-inline'",
            f"img-src {scope} data:",
            f"font-src {scope} data:",
            f"connect-src {scope}",
            f"form-action {scope}",
            "frame-src 'none'",
            "child-src 'none'",
            "worker-src 'none'",
            "object-src 'none'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ]
    )


def _unavailable(request: Request, what: str) -> Response:
    detail = f"{what}: it may be starting or stopping. Try again in a few seconds."
    return render_error(request, 502, "Spark UI unavailable", detail, None)
