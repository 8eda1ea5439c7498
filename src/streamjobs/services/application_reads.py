"""Reading applications back: one application with its attempts and its standby driver, the
applications of the jobs an actor may see (filtered and paged), and an application's events,
progress, throughput and template.

``ApplicationReads`` holds these reads for ``applications.ApplicationService``; each is one read
transaction, and an application whose job the actor may not see is reported as not found, so its
existence is not disclosed either.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound
from streamjobs.domain.states import ACTIVE_STATES, AppState
from streamjobs.domain.throughput import Bucket
from streamjobs.services.access import require_job, visible_to
from streamjobs.services.resources import Page, check_page, tag_filter
from streamjobs.store import (
    ApplicationEventRecord,
    ApplicationRecord,
    AttemptRecord,
    ProgressRecord,
)
from streamjobs.store.db import Repositories, Store

ApplicationPage = Page[ApplicationRecord]


@dataclass(frozen=True)
class ApplicationQuery:
    """Which applications to list; every filter is optional. ``tag`` is ``key`` or ``key=value``."""

    job_name: str | None = None
    status: str | None = None
    triggered_by: str | None = None
    tag: str | None = None
    search: str | None = None
    limit: int = 50
    offset: int = 0


class StandbyState(StrEnum):
    """Where a held standby driver is: starting (JVM and Spark session coming up) or ready (its
    driver said it is warm and waits to be promoted)."""

    STARTING = "starting"
    READY = "ready"


@dataclass(frozen=True)
class StandbyDriver:
    """The standby driver an application holds now: a held attempt that has not ended."""

    attempt: AttemptRecord

    @property
    def state(self) -> StandbyState:
        """Ready once the supervisor recorded its driver ready (its ``running_at``)."""
        return StandbyState.READY if self.attempt.running_at else StandbyState.STARTING


@dataclass(frozen=True)
class ApplicationDetails:
    """An application with its attempts (held standbys among them, ``AttemptRecord.standby``),
    the standby driver it holds now, and its latest executor figures."""

    application: ApplicationRecord
    attempts: list[AttemptRecord]
    executors: dict[str, Any] | None
    standby: StandbyDriver | None = None

    @property
    def latest_attempt(self) -> AttemptRecord | None:
        """The attempt of the application's driver: the newest one that is not a held standby
        (``store``'s ``latest_attempt``, from the attempts read here)."""
        drivers = [attempt for attempt in self.attempts if not attempt.held]
        return drivers[-1] if drivers else None


class ApplicationReads:
    """Reads applications back on behalf of an actor."""

    _store: Store

    def get(self, application_id: str, *, actor: Actor) -> ApplicationDetails:
        with self._store.reading() as repos:
            application = visible_application(repos, actor, application_id)
            figures = repos.applications.executor_figures(application_id)
            return ApplicationDetails(
                application=application,
                attempts=repos.applications.attempts(application_id),
                executors=figures.figures if figures else None,
                standby=held_standby(repos, application),
            )

    def list(self, query: ApplicationQuery, *, actor: Actor) -> ApplicationPage:
        """The applications of the jobs ``actor`` may see that pass the query's filters."""
        check_page(query.limit, query.offset)
        states = [_state(query.status)] if query.status else None
        tag = tag_filter(query.tag) if query.tag else None
        filters: dict[str, Any] = {
            "job_name": query.job_name,
            "states": states,
            "triggered_by": query.triggered_by,
            "tag": tag,
            "search": query.search,
        }
        with self._store.reading() as repos:
            filters["bundles"] = visible_to(repos, actor)
            if query.job_name is not None:
                bundle = repos.jobs.bundle_of(query.job_name)
                require_job(repos, actor, query.job_name, bundle, JobAction.VIEW)
            items, total = repos.applications.list(
                **filters, limit=query.limit, offset=query.offset
            )
        return ApplicationPage(items=items, total=total, limit=query.limit, offset=query.offset)

    def events(
        self,
        application_id: str,
        *,
        actor: Actor,
        after_id: int | None = None,
        before_id: int | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> builtins.list[ApplicationEventRecord]:
        with self._store.reading() as repos:
            visible_application(repos, actor, application_id)
            return repos.applications.events(
                application_id,
                after_id=after_id,
                before_id=before_id,
                limit=limit,
                newest_first=newest_first,
            )

    def progress(
        self, application_id: str, *, actor: Actor, limit: int = 100
    ) -> builtins.list[ProgressRecord]:
        check_page(limit, 0)
        with self._store.reading() as repos:
            visible_application(repos, actor, application_id)
            return repos.applications.progress(application_id, limit=limit)

    def throughput(
        self, application_id: str, *, actor: Actor, limit: int = 500
    ) -> tuple[builtins.list[ProgressRecord], builtins.list[Bucket]]:
        """The ``limit`` newest progress reports and the buckets of the application's whole
        life (``store.throughput``), read together: what its chart is drawn from."""
        check_page(limit, 0)
        with self._store.reading() as repos:
            visible_application(repos, actor, application_id)
            progress = repos.applications.progress(application_id, limit=limit)
            return progress, repos.applications.throughput_buckets(application_id)

    def template(self, application_id: str, *, actor: Actor) -> dict[str, Any]:
        """The job exactly as this application runs it (its immutable snapshot)."""
        with self._store.reading() as repos:
            visible_application(repos, actor, application_id)
            return repos.applications.spec(application_id)


def visible_application(
    repos: Repositories, actor: Actor, application_id: str
) -> ApplicationRecord:
    """The application, if ``actor`` may see its job; ``NotFound`` (naming the application)
    otherwise, so an application's existence is not disclosed either."""
    application = repos.applications.get(application_id)
    try:
        require_job(repos, actor, application.job_name, application.bundle, JobAction.VIEW)
    except NotFound:
        raise NotFound("application", application_id) from None
    return application


def held_standby(repos: Repositories, application: ApplicationRecord) -> StandbyDriver | None:
    """The standby driver ``application`` holds now: its newest held standby while it has not
    ended and the application is one the supervisor works on (an ended one is history, shown
    among the attempts only)."""
    if application.state not in ACTIVE_STATES:
        return None
    attempt = repos.applications.standby_attempt(application.id)
    if attempt is None or attempt.ended_at is not None:
        return None
    return StandbyDriver(attempt)


def _state(status: str) -> AppState:
    try:
        return AppState(status.upper())
    except ValueError:
        known = ", ".join(state.value for state in AppState)
        raise InvalidInput(
            [FieldError("query.status", f"{status!r} is not a state (known: {known})")]
        ) from None
