"""What a job's page shows about its applications, computed once for the whole page and for the
part the page refreshes while an application is active (``web.routes.job_detail``).

The page and its refreshed part are rendered by the same templates from the same context, so a
row, a state's name, a duration or a rate is written in one place (Jinja, through
``streamjobs.formatting`` and ``domain.states.label``), never rebuilt by script. Why Stop, Resume
and Abort app are disabled is decided here: the missing permission first (``web.job_refusals``),
then the state of the application they would act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamjobs import formatting
from streamjobs.domain.access import Actor
from streamjobs.domain.states import (
    ACTIVE_STATES,
    LIVE_STATES,
    TERMINAL_STATES,
    AppState,
    label,
)
from streamjobs.http.documents import application_document
from streamjobs.services.applications import ApplicationQuery
from streamjobs.services.container import Services
from streamjobs.store import ApplicationRecord
from streamjobs.web.job_refusals import JobRefusals

APPLICATIONS_SHOWN = 500
"""The newest applications a job's page loads; filters then work over them in the browser."""
ABORT_REFUSALS = {
    "ended": "This application has ended; only a live application can be aborted",
    "stopping": "This application is already being stopped",
}
"""Why Abort app is disabled (its title), by reason."""
STOP_REFUSALS = {
    "none": "The job has no live application to stop",
    "stopping": "Its application is already being stopped",
}
RESUME_REFUSAL = "Only a suspended application can be resumed"
RATE_STATES = frozenset({AppState.RUNNING, AppState.TERMINATING})
"""States in which a driver processes rows, so its latest rows/s mean something now; in any
other state (starting again, waiting to restart, suspended, ended) the rates are left blank."""


@dataclass(frozen=True)
class ApplicationFilters:
    """The Applications tab's filters, as query parameters named like the REST API's."""

    status: str = ""
    triggered_by: str = ""
    tag: str = ""
    search: str = ""
    run_as: str = ""

    @property
    def any(self) -> bool:
        return any((self.status, self.triggered_by, self.tag, self.search, self.run_as))

    def query(self, job_name: str) -> ApplicationQuery:
        """The store's query for the filters it knows (run-as is matched here, in ``matches``)."""
        return ApplicationQuery(
            job_name=job_name,
            status=self.status or None,
            triggered_by=self.triggered_by or None,
            tag=self.tag or None,
            search=self.search or None,
            limit=APPLICATIONS_SHOWN,
        )

    def matches_run_as(self, record: ApplicationRecord) -> bool:
        return not self.run_as or record.run_as == self.run_as


@dataclass(frozen=True)
class LiveActions:
    """The job's live application (None if it has none) and why Stop and Resume are disabled."""

    application: ApplicationRecord | None
    stop_refusal: str | None
    resume_refusal: str | None

    @property
    def name(self) -> str:
        return self.application.name if self.application else ""

    @property
    def state_label(self) -> str:
        return label(self.application.state) if self.application else ""


@dataclass(frozen=True)
class JobApplications:
    """Everything the Applications tab and the job's status show, for the page or its refresh."""

    rows: list[dict[str, Any]]
    newest: list[ApplicationRecord]
    live: LiveActions
    any_active: bool
    shown: int


def job_applications(
    services: Services,
    name: str,
    actor: Actor,
    refusals: JobRefusals,
    filters: ApplicationFilters,
) -> JobApplications:
    """The job's newest applications as table rows (those the filters leave out are hidden,
    not dropped, so the browser can filter again without asking) and its live actions."""
    newest = services.applications.list(
        ApplicationQuery(job_name=name, limit=APPLICATIONS_SHOWN), actor=actor
    ).items
    matching = (
        services.applications.list(filters.query(name), actor=actor).items
        if filters.any
        else newest
    )
    matching_ids = {app.id for app in matching if filters.matches_run_as(app)}
    loaded = {app.id: app for app in [*newest, *matching]}
    ordered = sorted(loaded.values(), key=lambda app: app.created_at, reverse=True)
    now = services.clock.now()
    live = live_actions(newest[0] if newest else None, refusals)
    rows = [
        application_row(app, app.id in matching_ids, now, refusals, live.application)
        for app in ordered
    ]
    return JobApplications(
        rows=rows,
        newest=newest,
        live=live,
        any_active=any(app.state in ACTIVE_STATES for app in ordered),
        shown=len([row for row in rows if row["row"]["shown"]]),
    )


def live_actions(newest: ApplicationRecord | None, refusals: JobRefusals) -> LiveActions:
    """Stop and Resume act on the job's live application: its newest, if that one is live."""
    live = newest if newest is not None and newest.state in LIVE_STATES else None
    return LiveActions(
        application=live,
        stop_refusal=refusals.stop or _stop_refusal(live),
        resume_refusal=refusals.resume or _resume_refusal(live),
    )


def _stop_refusal(live: ApplicationRecord | None) -> str | None:
    if live is None:
        return STOP_REFUSALS["none"]
    if live.state is AppState.TERMINATING:
        return STOP_REFUSALS["stopping"]
    return None


def _resume_refusal(live: ApplicationRecord | None) -> str | None:
    return None if live is not None and live.state is AppState.SUSPENDED else RESUME_REFUSAL


def application_row(
    record: ApplicationRecord,
    shown: bool,
    now: datetime,
    refusals: JobRefusals,
    live: ApplicationRecord | None,
) -> dict[str, Any]:
    """The application as the API shows it, plus what its row needs to render: its duration so
    far, its rates while a driver processes, and which actions its menu offers."""
    document = application_document(record)
    active = record.state in ACTIVE_STATES
    ended = now if active else record.transition_time
    figures = record.latest or {}
    reporting = record.state in RATE_STATES
    is_live = live is not None and live.id == record.id
    document["row"] = {
        "shown": shown,
        "active": active,
        "abort_refusal": refusals.abort or abort_refusal(record.state),
        "live": is_live,
        "duration": formatting.duration((ended - record.created_at).total_seconds()),
        "input_rate": figures.get("inputRowsPerSecond") if reporting else None,
        "processed_rate": figures.get("processedRowsPerSecond") if reporting else None,
        "tags": " ".join(f"{key}={value}" for key, value in record.tags.items()),
    }
    return document


def abort_refusal(state: AppState) -> str | None:
    """Why Abort app is disabled for an application in ``state``; None when it is allowed."""
    if state in TERMINAL_STATES:
        return ABORT_REFUSALS["ended"]
    if state is AppState.TERMINATING:
        return ABORT_REFUSALS["stopping"]
    return None


def filter_options(
    applications: list[ApplicationRecord], filters: ApplicationFilters
) -> dict[str, list[str]]:
    """The choices of each filter: the values the job's applications have, and the current one."""
    return {
        "runAs": sorted({app.run_as for app in applications} | _chosen(filters.run_as)),
        "triggeredBy": sorted(
            {app.triggered_by for app in applications} | _chosen(filters.triggered_by)
        ),
        "tag": sorted(
            {f"{k}={v}" for app in applications for k, v in app.tags.items()} | _chosen(filters.tag)
        ),
    }


def state_choices() -> list[tuple[str, str]]:
    """The Status filter's choices: each state's API value and its name."""
    return [(state.value, label(state)) for state in AppState]


def _chosen(value: str) -> set[str]:
    return {value} if value else set()
