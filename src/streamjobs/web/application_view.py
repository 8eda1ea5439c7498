"""What the application page's live parts show, built once for the page and for its partials.

The page and the partials htmx refreshes (status, chart, events) render the same templates from
the same context, so a refreshed part reads exactly as the first rendering did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamjobs import formatting
from streamjobs.domain.access import Actor
from streamjobs.domain.event_levels import EventLevel, event_level
from streamjobs.domain.states import ACTIVE_STATES, TERMINAL_STATES
from streamjobs.http.documents import details_document, event_document
from streamjobs.services.applications import ApplicationDetails
from streamjobs.services.container import Services
from streamjobs.store import ApplicationEventRecord, ApplicationRecord
from streamjobs.web import throughput
from streamjobs.web.figures import MAIN_CARDS, MORE_CARDS, MetricCard, Unit, executor_totals, human
from streamjobs.web.job_refusals import abort_refusal

EVENTS_PAGE = 50
"""Events shown at once, newest first; "More" shows the next older ones."""
COUNTED_EVENTS = 1000
"""The newest events the Events tab's warning count looks at."""


@dataclass(frozen=True)
class EventPage:
    """Events newest first, and the id to ask "before" for the next older page (None: no more)."""

    rows: list[dict[str, Any]]
    older_than: int | None


def status_context(services: Services, details: ApplicationDetails, actor: Actor) -> dict[str, Any]:
    """The page head, figures, facts, attempts and error summary of an application."""
    record = details.application
    application = details_document(details)
    state = record.state
    terminal = state in TERMINAL_STATES
    totals = executor_totals(details.executors)
    figures = application.get("latest") or {}
    latest = details.latest_attempt
    now = services.clock.now()
    return {
        "app": application,
        "terminal": terminal,
        "active": state in ACTIVE_STATES,
        "abort_forbidden": abort_refusal(services, record.job_name, record.bundle, actor),
        "cards": [_card(card, totals) for card in MAIN_CARDS],
        "more_cards": [_card(card, totals) for card in MORE_CARDS],
        "memory_spilled": human(totals["memory_spilled_bytes"] if totals else None, Unit.BYTES),
        "latest_rates": _latest_rates(figures, terminal),
        "batch_duration": formatting.milliseconds(figures.get("batchDurationMs")),
        "duration": formatting.duration(_duration_seconds(record.created_at, _end(record, now))),
        "finished_at": application["transitionTime"] if terminal else None,
        "error": error_summary(application, latest.number if latest else None),
        "latest_attempt": latest,
        "warnings": sum(
            1
            for event in services.applications.events(
                record.id, actor=actor, limit=COUNTED_EVENTS, newest_first=True
            )
            if event_level(event.kind) is not EventLevel.INFO
        ),
    }


def chart_context(
    services: Services, details: ApplicationDetails, actor: Actor, wanted: str
) -> dict[str, Any]:
    """The throughput chart over the range ``wanted``, from the stored progress reports and,
    where they were pruned, the buckets of the application's whole life."""
    record = details.application
    records, buckets = services.applications.throughput(record.id, actor=actor, limit=500)
    return {
        "app_id": record.id,
        "terminal": record.state in TERMINAL_STATES,
        "chart": throughput.chart(
            throughput.throughput_points(records),
            wanted=wanted,
            created_at=record.created_at,
            end=_end(record, services.clock.now()),
            buckets=buckets,
        ),
        "ranges": {key: label for key, (label, _) in throughput.RANGES.items()},
    }


def event_page(events: Sequence[ApplicationEventRecord], *, page_size: int) -> EventPage:
    """The rows of one page read newest first with one more than ``page_size``: that extra one
    only tells there are older events."""
    shown = list(events[:page_size])
    rows = [event_row(event) for event in shown]
    older = shown[-1].id if len(events) > page_size and shown else None
    return EventPage(rows, older)


def event_row(event: ApplicationEventRecord) -> dict[str, Any]:
    """An event as the Events tab lists it: its level, first line, and the rest (a trace)."""
    document = event_document(event)
    headline, _, trace = document["message"].strip("\n").partition("\n")
    level = str(event_level(event.kind))
    return {**document, "level": level, "headline": headline, "trace": trace}


def error_summary(application: dict[str, Any], latest_attempt: int | None) -> dict[str, Any] | None:
    """The application's error (the cause the supervisor extracted) and where its full log is:
    the driver's log of ``latest_attempt`` (not a standby's held beside it)."""
    message = (application.get("errorMessage") or "").strip()
    if not message:
        return None
    headline, _, rest = message.partition("\n")
    return {
        "headline": headline,
        "rest": rest.strip("\n"),
        "attempt": latest_attempt,
    }


def _latest_rates(latest: dict[str, Any], terminal: bool) -> dict[str, str]:
    """Rows/s while the application lives; blank once it ended (they would be stale)."""
    if terminal:
        return {"input": "", "processed": ""}
    return {
        "input": formatting.rate(latest.get("inputRowsPerSecond")),
        "processed": formatting.rate(latest.get("processedRowsPerSecond")),
    }


def _card(card: MetricCard, totals: dict[str, int] | None) -> dict[str, Any]:
    value = totals[card.key] if totals else None
    return {
        "key": card.key,
        "label": card.label,
        "unit": str(card.unit),
        "text": human(value, card.unit),
    }


def _end(record: ApplicationRecord, now: datetime) -> datetime:
    """When the application ended, or now while it lives."""
    return record.transition_time if record.state in TERMINAL_STATES else now


def _duration_seconds(start: datetime, end: datetime) -> float:
    return float((end - start).total_seconds())
