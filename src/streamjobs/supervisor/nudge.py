"""Wakes the supervisor when a request changed what it has to do, rather than at its next tick.

Without it, a Run waits for the loop's next tick (up to ``supervisor_interval_seconds``) before
its driver is submitted, and a driver's first report for the tick after it before the
application is RUNNING. ``nudging(app, supervisor)`` wraps the server's ASGI application: once
a request has been answered with success (its transaction committed), a Run, stop, resume,
suspend, upgrade, snapshot or abort (API or web UI) wakes the loop, and a driver's report
wakes it only while that application is starting (``Supervisor.driver_reported``), so the
steady stream of progress reports and heartbeats never makes the loop tick more often.

Plain ASGI, no framework: it reads the method, the path and the response's status only.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REQUESTS = re.compile(
    r"(?:/api/v1)?/jobs/[^/]+/(?:run|stop|resume|suspend|upgrade|snapshots)"
    r"|(?:/api/v1)?/applications/[^/]+/abort"
)
"""Paths (API and web UI) of the requests that change what the supervisor has to do."""
REPORTS = re.compile(r"/api/v1/applications/(?P<application>[^/]+)/reports")
"""Where drivers post their reports."""


class Nudgeable(Protocol):
    """What the middleware calls (``Supervisor``)."""

    def wake(self) -> None: ...

    def driver_reported(self, application_id: str) -> None: ...


def nudging(app: AsgiApp, supervisor: Nudgeable) -> AsgiApp:
    """``app``, waking ``supervisor`` after each successful request that concerns it."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        nudge = _nudge_for(scope, supervisor)
        if nudge is None:
            await app(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await app(scope, receive, sending)
        if 200 <= status < 400:
            nudge()

    return middleware


def _nudge_for(scope: Scope, supervisor: Nudgeable) -> Callable[[], None] | None:
    """What to call once the request has succeeded; None when it does not concern the loop."""
    if scope.get("type") != "http" or scope.get("method") != "POST":
        return None
    path = str(scope.get("path", ""))
    if REQUESTS.fullmatch(path):
        return supervisor.wake
    report = REPORTS.fullmatch(path)
    if report:
        application = report.group("application")
        return lambda: supervisor.driver_reported(application)
    return None
