"""Applications (runs of jobs) in the store, with optimistic concurrency like jobs.

An application keeps the snapshot of the job it started with, its state and its counters; the
supervisor changes it with ``update``, naming the version it read. A job has at most one live
application (``LIVE_STATES``): ``add`` refuses a second one, and so does the database through the
unique ``live_key``, which holds the job name only while the application is live. Applications
outlive their jobs as history. Attempts and events live in ``application_history.py``, progress
and executor figures in ``application_reports.py``; this repository offers them too.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, cast
from uuid import uuid4

from sqlalchemy import ColumnElement, Select, bindparam, func, select
from sqlalchemy.exc import IntegrityError

from streamjobs.domain.errors import Conflict, NotFound
from streamjobs.domain.quotas import Demand
from streamjobs.domain.states import ACTIVE_STATES, LIVE_STATES, TERMINAL_STATES, AppState
from streamjobs.store.application_filters import (
    ApplicationFilters,
    GivenFilters,
    application_criteria,
)
from streamjobs.store.application_history import ApplicationHistory
from streamjobs.store.application_reports import ApplicationReports
from streamjobs.store.base import VersionedRepository
from streamjobs.store.list_filters import TagFilter
from streamjobs.store.tables import ApplicationRow

CHANGEABLE_FIELDS = frozenset(
    {
        "state",
        "submission_attempts",
        "execution_attempts",
        "restarts",
        "submission_failures",
        "execution_failures",
        "driver_state",
        "executors_running",
        "executors_pending",
        "exit_code",
        "error_message",
        "requested",
        "requested_at",
        "requested_by",
        "next_attempt_at",
        "running_since",
        "last_heartbeat_at",
        "spark_app_id",
        "token_hash",
        "latest",
        "spec",
        "cores",
        "memory_mb",
        "job_version",
    }
)
"""What ``update`` may change; the rest (who started it, when) is fixed. ``spec`` (and
``job_version``) change only when a suspended application is resumed with the job as edited
since."""


@dataclass(frozen=True)
class ApplicationRecord:
    """An application as stored: one run of ``job_name``, called ``<job name>-<run number>``.

    The job manifest it runs (its spec) is not part of the record: lists and the supervisor read
    many applications often and need it rarely. ``ApplicationRepository.spec`` reads it.
    """

    id: str
    name: str
    run_number: int
    job_name: str
    namespace: str
    bundle: str
    tags: dict[str, str]
    state: AppState
    triggered_by: str
    run_as: str
    created_at: datetime
    transition_time: datetime
    """When ``state`` last changed."""
    last_update_time: datetime
    """When anything was last observed or changed."""
    submission_attempts: int
    execution_attempts: int
    restarts: int
    submission_failures: int
    """Consecutive failures to start, for the restart policy."""
    execution_failures: int
    """Consecutive failures while running, for the restart policy."""
    driver_state: str | None
    executors_running: int
    executors_pending: int
    exit_code: int | None
    error_message: str | None
    requested: str | None
    """Either "abort" or "stop", once someone asked for it."""
    requested_at: datetime | None
    requested_by: str | None
    next_attempt_at: datetime | None
    """When a PENDING_RERUN application starts its next attempt."""
    running_since: datetime | None
    """When the current attempt reached RUNNING."""
    last_heartbeat_at: datetime | None
    spark_app_id: str | None
    latest: dict[str, Any]
    """The latest figures reported, e.g. ``inputRowsPerSecond``."""
    version: int
    cores: int = 0
    """Cores its driver and executors take, counted against its bundle's quota."""
    memory_mb: int = 0
    token_hash: str | None = field(default=None, repr=False)
    """The sha256 (hex) of the token the application's driver reports with."""
    job_version: int | None = None
    """The version of the job its spec came from (None for applications stored before this was
    kept): the job is "changed since running" when its version is newer."""


_RECORD_FIELDS = [each.name for each in fields(ApplicationRecord)]
_SELECT_APPLICATIONS: Select[Any] = select(
    *[ApplicationRow.__table__.c[name] for name in _RECORD_FIELDS]
)
"""The columns an ``ApplicationRecord`` is made of, in its fields' order (not the spec), as plain
rows, not ORM objects: reading is what lists and the supervisor do most, and rows skip the
identity map (so they are always as stored now). Each query decodes the JSON columns afresh: no
two records share a dict. Built once: a statement is immutable, and building one costs more
than running it."""
_STATES = {state.value: state for state in AppState}


class ApplicationRepository(VersionedRepository, ApplicationHistory, ApplicationReports):
    """Adds, reads, lists and changes applications, and keeps their history."""

    # base.py's annotation names only the tables it was written for
    _table = ApplicationRow
    _kind = "application"

    def add(
        self,
        *,
        job_name: str,
        namespace: str,
        bundle: str,
        tags: dict[str, str],
        spec: dict[str, Any],
        state: AppState,
        triggered_by: str,
        run_as: str,
        at: datetime,
        token_hash: str | None = None,
        demand: Demand = Demand(),
        job_version: int | None = None,
    ) -> ApplicationRecord:
        """Store the job's next application at version 1, with its run number and name.

        ``Conflict`` if the job already has a live application, whatever ``state`` this one has.
        """
        live = self.live_for_job(job_name)
        if live is not None:
            raise Conflict(
                f"job {job_name!r} already has a live application {live.name} ({live.id}) "
                f"in state {live.state}"
            )
        last_run = self._session.scalar(
            select(func.max(ApplicationRow.run_number)).where(ApplicationRow.job_name == job_name)
        )
        run_number = (last_run or 0) + 1
        row = ApplicationRow(
            id=f"app-{uuid4().hex[:12]}",
            name=f"{job_name}-{run_number}",
            run_number=run_number,
            job_name=job_name,
            namespace=namespace,
            bundle=bundle,
            tags=tags,
            spec=spec,
            state=AppState(state).value,
            live_key=_live_key(job_name, AppState(state)),
            triggered_by=triggered_by,
            run_as=run_as,
            created_at=at,
            transition_time=at,
            last_update_time=at,
            token_hash=token_hash,
            latest={},
            cores=demand.cores,
            memory_mb=demand.memory_mb,
            job_version=job_version,
        )
        try:
            self._insert(row)
        except IntegrityError as error:
            # Another transaction added an application of the job since the look-up above; this
            # transaction cannot read it any more, so the message cannot name it.
            raise Conflict(
                f"job {job_name!r} got another application while this one was being added; "
                "read the job's applications and retry"
            ) from error
        return self.get(row.id)

    def get(self, application_id: str) -> ApplicationRecord:
        """The application ``application_id``; ``NotFound`` if there is none."""
        application = self.find(application_id)
        if application is None:
            raise NotFound("application", application_id)
        return application

    def find(self, application_id: str) -> ApplicationRecord | None:
        """The application ``application_id``, or None."""
        return self._find_one(ApplicationRow.id == application_id)

    def spec(self, application_id: str) -> dict[str, Any]:
        """The job manifest the application runs; editing the job does not change it (Resume of
        a suspended application takes the job as it is then). ``NotFound`` if there is none."""
        spec = self._session.scalar(
            select(ApplicationRow.spec).where(ApplicationRow.id == application_id)
        )
        if spec is None:
            raise NotFound("application", application_id)
        return cast(dict[str, Any], spec)

    def specs(self, application_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The specs of the given applications by id (those that exist), in one query."""
        ids = set(application_ids)
        if not ids:
            return {}
        rows = self._session.execute(
            select(ApplicationRow.id, ApplicationRow.spec).where(ApplicationRow.id.in_(ids))
        )
        return dict(rows.all())

    def find_by_token_hash(self, token_hash: str) -> ApplicationRecord | None:
        """The application whose driver reports with the token hashing to ``token_hash``."""
        return self._find_one(ApplicationRow.token_hash == token_hash)

    def live_for_job(self, job_name: str) -> ApplicationRecord | None:
        """The job's one application in a live state, or None."""
        return self._find_one(ApplicationRow.live_key == job_name)

    def list(
        self,
        *,
        job_name: str | None = None,
        states: Iterable[AppState] | None = None,
        triggered_by: str | None = None,
        tag: TagFilter | None = None,
        search: str | None = None,
        bundles: Collection[str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[builtins.list[ApplicationRecord], int]:
        """One page of the applications that pass every given filter, newest first, and how many
        pass in all: one statement, unless the page is empty past the first (then the count is
        read on its own).

        ``search`` matches any part of the id or the name, ignoring case; ``bundles``, when
        given, keeps only the applications of those bundles (the ones the caller may see).
        """
        filters = ApplicationFilters(
            job_name=job_name,
            states=states,
            triggered_by=triggered_by,
            tag=tag,
            search=search,
            bundles=bundles,
        )
        values = filters.values()
        page = _page_of(filters.given)
        rows = self._read(page, {**values, "limit": limit, "offset": offset}).all()
        if rows:
            return [_record(row[:-1]) for row in rows], int(rows[0].total)
        if offset == 0:
            return [], 0
        return [], int(self._read(_count_of(filters.given), values).scalar_one())

    def demand_in_bundle(self, bundle: str) -> Demand:
        """What the bundle's running applications (``ACTIVE_STATES``) take in all."""
        applications, cores, memory = self._session.execute(
            select(
                func.count(),
                func.coalesce(func.sum(ApplicationRow.cores), 0),
                func.coalesce(func.sum(ApplicationRow.memory_mb), 0),
            ).where(
                ApplicationRow.bundle == bundle,
                ApplicationRow.state.in_([state.value for state in ACTIVE_STATES]),
            )
        ).one()
        return Demand(applications=int(applications), cores=int(cores), memory_mb=int(memory))

    def supervised(self) -> builtins.list[ApplicationRecord]:
        """The applications the supervisor works on (``ACTIVE_STATES``), oldest first."""
        rows = self._read(
            _SELECT_APPLICATIONS.where(
                ApplicationRow.state.in_([state.value for state in ACTIVE_STATES])
            ).order_by(ApplicationRow.created_at, ApplicationRow.id)
        )
        return [_record(row) for row in rows.all()]

    def update(
        self, application_id: str, *, version: int, at: datetime, **changes: Any
    ) -> ApplicationRecord:
        """Change the fields named in ``CHANGEABLE_FIELDS`` and bump the version.

        ``last_update_time`` becomes ``at``; so does ``transition_time`` when ``state`` changes.
        An application reaching a terminal state loses its ``token_hash``: no report is taken
        from its driver any more.
        ``Conflict`` if the application is no longer at ``version`` (or a new live state would
        make it the job's second live application); ``NotFound`` if it does not exist;
        ``TypeError`` for a field that cannot change.
        """
        unknown = changes.keys() - CHANGEABLE_FIELDS
        if unknown:
            raise TypeError(f"an application's {', '.join(sorted(unknown))} cannot be changed")
        current = self.get(application_id)
        values = {**changes, "last_update_time": at}
        if "state" in changes:
            state = AppState(changes["state"])
            values["state"] = state.value
            if state is not current.state:
                values["transition_time"] = at
                values["live_key"] = _live_key(current.job_name, state)
            if state in TERMINAL_STATES:
                values["token_hash"] = None  # its driver's report token stops working
        try:
            self._update_versioned(current.id, current.name, expected_version=version, **values)
        except IntegrityError as error:
            raise Conflict(
                f"job {current.job_name!r} already has another live application, so "
                f"{current.name} ({current.id}) cannot become live again"
            ) from error
        return self.get(application_id)

    def _find_one(self, criterion: ColumnElement[bool]) -> ApplicationRecord | None:
        row = self._read(_SELECT_APPLICATIONS.where(criterion)).one_or_none()
        return None if row is None else _record(row)


def _live_key(job_name: str, state: AppState) -> str | None:
    return job_name if state in LIVE_STATES else None


@functools.lru_cache(maxsize=256)
def _page_of(given: GivenFilters) -> Select[Any]:
    """The applications passing the filters ``given``, newest first, ``limit`` of them from
    ``offset`` (both bound), each row ending with ``total``: how many pass in all."""
    criteria = application_criteria(given)
    total = _count_of(given).correlate(None).scalar_subquery().label("total")
    newest_first = (
        ApplicationRow.created_at.desc(),
        ApplicationRow.run_number.desc(),
        ApplicationRow.id.desc(),
    )
    return (
        _SELECT_APPLICATIONS.add_columns(total)
        .where(*criteria)
        .order_by(*newest_first)
        .limit(bindparam("limit"))
        .offset(bindparam("offset"))
    )


@functools.lru_cache(maxsize=256)
def _count_of(given: GivenFilters) -> Select[Any]:
    """How many applications pass the filters ``given``."""
    return select(func.count()).select_from(ApplicationRow).where(*application_criteria(given))


def _record(row: Sequence[Any]) -> ApplicationRecord:
    """The record of a row selected by ``_SELECT_APPLICATIONS`` (its columns are every field).

    Filled in directly rather than through the frozen dataclass's ``__init__``, which sets each
    of its 36 fields through ``object.__setattr__`` and cost lists and the tick most of a row's
    time."""
    record: ApplicationRecord = object.__new__(ApplicationRecord)
    values = record.__dict__
    values.update(zip(_RECORD_FIELDS, row, strict=True))
    values["state"] = _STATES[values["state"]]
    return record
