"""The statements that read jobs: each job's row with its tags and, where asked, its newest run
and the count of all that match, in one statement built once for each set of filters in use.

A page of jobs used to take four round trips (the count, the page, the page's tags, their newest
runs), two of them binding fifty values each, and a new statement built for every request. On
PostgreSQL each round trip costs more in the driver than the database takes to answer it, and
building a statement costs about what running it does. Here the tags come aggregated into one
JSON column, the newest run is joined (``latest_runs.py``), the count rides along as a scalar
subquery the database computes once, and every filter's value is a bound parameter, so each
combination of filters is built once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, ColumnElement, ScalarSelect, Select, bindparam, func, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from streamjobs.store.latest_runs import LATEST_RUN, LATEST_RUN_COLUMNS, is_latest_run_of
from streamjobs.store.list_filters import ListFilters, contains_search, in_bundles
from streamjobs.store.tables import JobRow, JobTagRow


@dataclass(frozen=True)
class JobFilters(ListFilters):
    """Which jobs a list keeps: those passing every filter given (``search``: the name)."""

    status: str | None = None
    bundle: str | None = None

    @property
    def given(self) -> _Given:
        """Which filters are given: all a statement's shape depends on."""
        return _Given(
            status=self.status is not None,
            tag_key=self.tag is not None,
            tag_value=self.tag is not None and self.tag[1] is not None,
            bundle=self.bundle is not None,
            search=bool(self.search),
            bundles=self.bundles is not None,
        )

    def values(self) -> dict[str, Any]:
        """The values to bind to the statements of ``given``."""
        values = super().values()
        if self.status is not None:
            values["status"] = self.status
        if self.bundle is not None:
            values["bundle"] = self.bundle
        if self.tag is not None:
            values["tag_key"] = self.tag[0]
        return values


ALL_JOBS = JobFilters()
"""No filter: every job."""


@dataclass(frozen=True)
class _Given:
    status: bool
    tag_key: bool
    tag_value: bool
    bundle: bool
    search: bool
    bundles: bool


class TagObject(FunctionElement[Any]):
    """The JSON object ``{key: value, …}`` aggregated from the ``(key, value)`` rows of a group
    (NULL for none): ``json_group_object`` on SQLite, ``json_object_agg`` on PostgreSQL (and
    when a statement is printed)."""

    type = JSON()
    name = "tag_object"
    inherit_cache = True


@compiles(TagObject)
def _tag_object_on_postgresql(element: TagObject, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json_object_agg({compiler.process(element.clauses, **kw)})"


@compiles(TagObject, "sqlite")
def _tag_object_on_sqlite(element: TagObject, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json_group_object({compiler.process(element.clauses, **kw)})"


def tags_of(job_id: ColumnElement[Any] | QueryableAttribute[str]) -> ScalarSelect[Any]:
    """The tags of the job whose id is ``job_id``, as one JSON object (NULL if it has none)."""
    return (
        select(TagObject(JobTagRow.key, JobTagRow.value))
        .where(JobTagRow.job_id == job_id)
        .scalar_subquery()
    )


@functools.cache
def jobs_page(given: _Given, *, latest_run: bool) -> Select[Any]:
    """The jobs passing the filters ``given`` by name, ``limit`` of them from ``offset`` (both
    bound, like the filters' ``JobFilters.values``).

    Each row has the job's columns, ``tags`` and ``total``: how many jobs pass the filters in
    all; with ``latest_run``, also the ``LATEST_RUN_COLUMNS`` (NULL for a job never run). The
    page is chosen first, so tags and runs are read for its rows only.
    """
    criteria = _criteria(given)
    chosen = select(JobRow.__table__).where(*criteria).order_by(JobRow.name)
    page = chosen.limit(bindparam("limit")).offset(bindparam("offset")).subquery("page")
    counted = select(func.count()).select_from(JobRow).where(*criteria).scalar_subquery()
    statement: Select[Any] = select(
        page,
        tags_of(page.c.id).label("tags"),
        counted.label("total"),
    )
    if latest_run:
        statement = statement.add_columns(*LATEST_RUN_COLUMNS).outerjoin(
            LATEST_RUN, is_latest_run_of(page.c.name)
        )
    return statement.order_by(page.c.name)


@functools.cache
def jobs_count(given: _Given) -> Select[Any]:
    """How many jobs pass the filters ``given``."""
    return select(func.count()).select_from(JobRow).where(*_criteria(given))


def job_named(*, latest_run: bool) -> Select[Any]:
    """The job of the bound ``name`` with its ``tags`` and, with ``latest_run``, the
    ``LATEST_RUN_COLUMNS``."""
    statement = select(JobRow.__table__, tags_of(JobRow.id).label("tags"))
    if latest_run:
        statement = statement.add_columns(*LATEST_RUN_COLUMNS).outerjoin(
            LATEST_RUN, is_latest_run_of(JobRow.name)
        )
    return statement.where(JobRow.name == bindparam("name"))


def _criteria(given: _Given) -> list[ColumnElement[bool]]:
    criteria: list[ColumnElement[bool]] = []
    if given.bundles:
        criteria.append(in_bundles(JobRow.bundle))
    if given.status:
        criteria.append(JobRow.status == bindparam("status"))
    if given.bundle:
        criteria.append(JobRow.bundle == bindparam("bundle"))
    if given.search:
        criteria.append(contains_search(JobRow.name))
    if given.tag_key:
        tagged = select(JobTagRow.job_id).where(
            JobTagRow.job_id == JobRow.id, JobTagRow.key == bindparam("tag_key")
        )
        if given.tag_value:
            tagged = tagged.where(JobTagRow.value == bindparam("tag_value"))
        criteria.append(tagged.exists())
    return criteria
