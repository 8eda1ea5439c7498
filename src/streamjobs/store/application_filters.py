"""Which applications a list keeps: the filters of ``GET /api/v1/applications`` as SQL criteria,
shared by the page and its total so that both always count the same rows.

Every filter's value is a bound parameter, so a page's statement depends only on which filters
are given (``ApplicationFilters.given``) and is built once for each such combination: building a
statement costs about what running it does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, bindparam, false

from streamjobs.domain.states import AppState
from streamjobs.store.list_filters import ListFilters, contains_search, in_bundles
from streamjobs.store.tables import ApplicationRow


@dataclass(frozen=True)
class GivenFilters:
    """Which filters are given (a tag filter's key too: it is part of a JSON path, not bound)."""

    job_name: bool
    states: bool
    triggered_by: bool
    tag_key: str | None
    tag_value: bool
    search: bool
    bundles: bool


@dataclass(frozen=True)
class ApplicationFilters(ListFilters):
    """The applications a list keeps: those passing every filter given (``search``: any part
    of the id or the name)."""

    job_name: str | None = None
    states: Iterable[AppState] | None = None
    triggered_by: str | None = None

    @property
    def given(self) -> GivenFilters:
        return GivenFilters(
            job_name=self.job_name is not None,
            states=self.states is not None,
            triggered_by=self.triggered_by is not None,
            tag_key=None if self.tag is None else self.tag[0],
            tag_value=self.tag is not None and self.tag[1] is not None,
            search=bool(self.search),
            bundles=self.bundles is not None,
        )

    def values(self) -> dict[str, Any]:
        """The values to bind to the criteria of ``given``."""
        values = super().values()
        if self.job_name is not None:
            values["job_name"] = self.job_name
        if self.states is not None:
            values["states"] = [AppState(state).value for state in self.states]
        if self.triggered_by is not None:
            values["triggered_by"] = self.triggered_by
        return values


def application_criteria(given: GivenFilters) -> list[ColumnElement[bool]]:
    """The WHERE criteria keeping the applications that pass every filter ``given``."""
    criteria: list[ColumnElement[bool]] = []
    if given.bundles:
        criteria.append(in_bundles(ApplicationRow.bundle))
    if given.job_name:
        criteria.append(ApplicationRow.job_name == bindparam("job_name"))
    if given.states:
        criteria.append(ApplicationRow.state.in_(bindparam("states", expanding=True)))
    if given.triggered_by:
        criteria.append(ApplicationRow.triggered_by == bindparam("triggered_by"))
    if given.tag_key is not None:
        criteria.append(_has_tag(given.tag_key, given.tag_value))
    if given.search:
        criteria.append(contains_search(ApplicationRow.id, ApplicationRow.name))
    return criteria


def _has_tag(key: str, with_value: bool) -> ColumnElement[bool]:
    if '"' in key or "\\" in key:
        # SQLite's JSON paths cannot quote these, and no valid tag key holds them
        return false()
    tag_value: ColumnElement[str] = ApplicationRow.tags[key].as_string()
    return tag_value == bindparam("tag_value") if with_value else tag_value.is_not(None)
