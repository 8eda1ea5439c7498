"""The application page: Details (figures, throughput chart, facts), Logs, Events, Template JSON.

Everything is rendered on the server, so the page reads without script; ``static/application.js``
then refreshes it from the application API while the application is not terminal. The page uses
the API's own documents (``http.documents``), so the template and the script see the same fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.states import ACTIVE_STATES, TERMINAL_STATES
from streamjobs.http.documents import details_document, event_document
from streamjobs.services.application_logs import MAX_TAIL_LINES, ApplicationLogs
from streamjobs.store import ApplicationRecord
from streamjobs.web.figures import (
    MAIN_CARDS,
    MORE_CARDS,
    MetricCard,
    Unit,
    executor_totals,
    human,
    human_elapsed,
)
from streamjobs.web.job_refusals import abort_refusal
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()

TABS = {"details": "Details", "logs": "Logs", "events": "Events", "template": "Template JSON"}
DEFAULT_LOG_LINES = 500
NO_LOGS = "No logs yet."
WARNING_KINDS = frozenset(
    {
        "failed",
        "driver-silent",
        "query-failed",
        "submission-failed",
        "restarting",
        "suspended",
        "aborted",
    }
)
"""Event kinds counted in the Events tab's badge and marked as warnings in its list."""


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
    instances: dict[str, int]
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
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    details = services.applications.get(application_id, actor=actor)
    application = details_document(details)
    state = details.application.state
    events = [
        event_document(event) for event in services.applications.events(application_id, actor=actor)
    ]
    totals = executor_totals(details.executors)
    now = services.clock.now()
    log_request, problem = _log_request(instance, attempt, lines, start, end)
    return render(
        request,
        "application.html",
        app=application,
        actor=actor,
        tabs=TABS,
        tab=tab if tab in TABS else "details",
        terminal=state in TERMINAL_STATES,
        abort_forbidden=abort_refusal(
            services, details.application.job_name, details.application.bundle, actor
        ),
        active=state in ACTIVE_STATES,
        cards=[_card(card, totals) for card in MAIN_CARDS],
        more_cards=[_card(card, totals) for card in MORE_CARDS],
        memory_spilled=human(totals["memory_spilled_bytes"] if totals else None, Unit.BYTES),
        batch_duration=human(application["latest"].get("batchDurationMs"), Unit.MILLISECONDS),
        duration=human_elapsed(_duration_seconds(details.application, now)),
        finished_at=application["transitionTime"] if state in TERMINAL_STATES else None,
        server_now=now.isoformat(),
        events=events,
        warning_kinds=sorted(WARNING_KINDS),
        warnings=sum(1 for event in events if event["kind"] in WARNING_KINDS),
        log=_log_view(services.logs, application_id, log_request, problem, actor),
        max_lines=MAX_TAIL_LINES,
        template_json=json.dumps(
            services.applications.template(application_id, actor=actor),
            indent=2,
            ensure_ascii=False,
        ),
    )


def _card(card: MetricCard, totals: dict[str, int] | None) -> dict[str, Any]:
    value = totals[card.key] if totals else None
    return {
        "key": card.key,
        "label": card.label,
        "unit": str(card.unit),
        "value": value,
        "text": human(value, card.unit),
    }


def _duration_seconds(application: ApplicationRecord, now: datetime) -> float:
    """From Run to the end (terminal) or to now."""
    ended = application.transition_time if application.state in TERMINAL_STATES else now
    return float((ended - application.created_at).total_seconds())


def _log_request(
    instance: str, attempt: str, lines: str, start: str, end: str
) -> tuple[LogRequest, str | None]:
    """The Logs form's fields as typed values (a form sends empty fields as empty strings)."""
    numbers: dict[str, int | None] = {}
    problem = None
    for name, text in (("attempt", attempt), ("lines", lines), ("start", start), ("end", end)):
        digits = text.strip()
        whole = digits.isascii() and digits.isdigit()  # "²" is a digit to isdigit, not to int
        numbers[name] = int(digits) if whole else None
        if digits and not whole:
            problem = f"{name}: give a whole number, not {digits!r}"
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
