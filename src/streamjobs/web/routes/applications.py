"""The application page: Details (figures, throughput chart, facts), Logs, Events, Template JSON.

Everything is rendered on the server, so the page reads without script. While the application
is not terminal, htmx refreshes its live parts from the partial routes below (status, chart,
events), which render the same templates the page includes; a partial rendered for a terminal
application carries no trigger, so refreshing stops by itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput, StreamjobsError
from streamjobs.domain.states import TERMINAL_STATES
from streamjobs.services.application_logs import MAX_TAIL_LINES, ApplicationLogs
from streamjobs.services.resources import LARGEST_INTEGER
from streamjobs.web import throughput
from streamjobs.web.application_view import (
    EVENTS_PAGE,
    chart_context,
    event_page,
    event_row,
    status_context,
)
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()

TABS = {"details": "Details", "logs": "Logs", "events": "Events", "template": "Template JSON"}
DEFAULT_LOG_LINES = 500
NO_LOGS = "No logs yet."
NEWER_EVENTS_AT_ONCE = 500
EventId = Annotated[int | None, Query(ge=0, le=LARGEST_INTEGER)]


@dataclass(frozen=True)
class LogRequest:
    """Which log the Logs tab shows: an instance of an attempt, its last lines or a byte range."""

    instance: str
    attempt: int | None
    lines: int
    start: int | None
    end: int | None


@dataclass(frozen=True)
class LogView:
    """What the Logs tab shows first: the instances there are, and a piece of one (or why not)."""

    request: LogRequest
    instances: dict[str, int | None]
    text: str = ""
    start: int = 0
    end: int = 0
    size: int = 0
    attempt: int | None = None
    error: str | None = None


@router.get("/applications/{application_id}")
def application_page(
    application_id: str,
    request: Request,
    tab: str = "details",
    instance: str = "",
    attempt: str = "",
    lines: str = "",
    start: str = "",
    end: str = "",
    range: str = throughput.DEFAULT_RANGE,
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    details = services.applications.get(application_id, actor=actor)
    events = services.applications.events(
        application_id, actor=actor, limit=EVENTS_PAGE + 1, newest_first=True
    )
    log_request, problem = _log_request(instance, attempt, lines, start, end)
    return render(
        request,
        "application.html",
        **(
            status_context(services, details, actor)
            | chart_context(services, details, actor, _chart_range(range))
        ),
        actor=actor,
        tabs=TABS,
        tab=tab if tab in TABS else "details",
        events=event_page(events, page_size=EVENTS_PAGE),
        newest_event=events[0].id if events else 0,
        log=_log_view(services.logs, application_id, log_request, problem, actor),
        max_lines=MAX_TAIL_LINES,
        template_json=json.dumps(
            services.applications.template(application_id, actor=actor),
            indent=2,
            ensure_ascii=False,
        ),
    )


@router.get("/applications/{application_id}/status")
def application_status(
    application_id: str, request: Request, actor: Actor = Depends(page_actor)
) -> Response:
    """The Details tab's figures, facts and attempts, with the page head's state, Abort button
    and warning count swapped in beside them (htmx out-of-band swaps)."""
    services = services_of(request)
    details = services.applications.get(application_id, actor=actor)
    return render(
        request, "application_status.html", **status_context(services, details, actor), oob=True
    )


@router.get("/applications/{application_id}/chart")
def application_chart(
    application_id: str,
    request: Request,
    range: str = throughput.DEFAULT_RANGE,
    actor: Actor = Depends(page_actor),
) -> Response:
    """The throughput chart over ``range`` (15m, 1h, 6h or all: the application's life)."""
    services = services_of(request)
    details = services.applications.get(application_id, actor=actor)
    context = chart_context(services, details, actor, _chart_range(range))
    return render(request, "application_chart.html", **context)


@router.get("/applications/{application_id}/events")
def application_events(
    application_id: str,
    request: Request,
    after: EventId = None,
    before: EventId = None,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Rows of the Events tab, newest first: those newer than ``after`` (with the next poller
    while the application lives), or the page older than ``before`` (with the next "More")."""
    if (after is None) == (before is None):
        raise InvalidInput([FieldError("query", "give either after or before (an event id)")])
    services = services_of(request)
    details = services.applications.get(application_id, actor=actor)
    context: dict[str, Any] = {"app": {"id": application_id}, "poll": False, "more": False}
    if after is not None:
        newer = services.applications.events(
            application_id, actor=actor, after_id=after, limit=NEWER_EVENTS_AT_ONCE
        )
        rows = [event_row(event) for event in reversed(newer)]
        context |= {
            "rows": rows,
            "poll": details.application.state not in TERMINAL_STATES,
            "newest_event": newer[-1].id if newer else after,
        }
    else:
        older = services.applications.events(
            application_id, actor=actor, before_id=before, limit=EVENTS_PAGE + 1, newest_first=True
        )
        page = event_page(older, page_size=EVENTS_PAGE)
        context |= {"rows": page.rows, "more": True, "older_than": page.older_than}
    return render(request, "application_events.html", **context)


def _chart_range(wanted: str) -> str:
    if wanted not in throughput.RANGES:
        choices = ", ".join(throughput.RANGES)
        raise InvalidInput([FieldError("query.range", f"must be one of {choices}")])
    return wanted


def _log_request(
    instance: str, attempt: str, lines: str, start: str, end: str
) -> tuple[LogRequest, str | None]:
    """The Logs form's fields as typed values (a form sends empty fields as empty strings);
    ``InvalidInput`` for a number no store or file offset holds."""
    numbers: dict[str, int | None] = {}
    problem = None
    for name, text in (("attempt", attempt), ("lines", lines), ("start", start), ("end", end)):
        digits = text.strip()
        whole = digits.isascii() and digits.isdigit()  # "²" is a digit to isdigit, not to int
        numbers[name] = int(digits) if whole else None
        if digits and not whole:
            problem = f"{name}: give a whole number, not {digits!r}"
    too_large = [name for name, number in numbers.items() if (number or 0) > LARGEST_INTEGER]
    if too_large:
        message = f"must be between 0 and {LARGEST_INTEGER}"
        raise InvalidInput([FieldError(f"query.{name}", message) for name in too_large])
    request = LogRequest(
        instance=instance.strip() or "driver",
        attempt=numbers["attempt"],
        lines=numbers["lines"] or DEFAULT_LOG_LINES,
        start=numbers["start"],
        end=numbers["end"],
    )
    return request, problem


def _log_view(
    logs: ApplicationLogs,
    application_id: str,
    wanted: LogRequest,
    problem: str | None,
    actor: Actor,
) -> LogView:
    """The instances of the attempt and the wanted piece of one; an error instead of a 404 page."""
    try:
        instances = logs.instances(application_id, actor=actor, attempt=wanted.attempt)
    except StreamjobsError as error:
        # Without an attempt asked for, a missing attempt only means none was submitted yet.
        return LogView(wanted, {}, error=error.detail if wanted.attempt else NO_LOGS)
    if not instances:
        return LogView(wanted, {}, error=NO_LOGS)
    if wanted.instance not in instances:
        fallback = "driver" if "driver" in instances else next(iter(instances))
        wanted = replace(wanted, instance=fallback)
    if problem:
        return LogView(wanted, instances, error=problem)
    ranged = wanted.start is not None or wanted.end is not None
    try:
        piece = logs.read(
            application_id,
            actor=actor,
            instance=wanted.instance,
            attempt=wanted.attempt,
            tail=None if ranged else wanted.lines,
            start=wanted.start,
            end=wanted.end,
        )
    except StreamjobsError as error:
        return LogView(wanted, instances, error=error.detail)
    return LogView(
        wanted,
        instances,
        text=piece.text,
        start=piece.start,
        end=piece.end,
        size=piece.size,
        attempt=piece.attempt,
    )
