"""Which applications a list or a count keeps: the filters of ``GET /api/v1/applications`` as
SQL criteria, shared by the page and its total so that both always count the same rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from sqlalchemy import ColumnElement, false, or_

from streamjobs.domain.states import AppState
from streamjobs.store.jobs import TagFilter
from streamjobs.store.tables import ApplicationRow


def application_criteria(
    *,
    job_name: str | None,
    states: Iterable[AppState] | None,
    triggered_by: str | None,
    tag: TagFilter | None,
    search: str | None,
    bundles: Collection[str] | None,
) -> list[ColumnElement[bool]]:
    """The WHERE criteria keeping the applications that pass every given filter; ``bundles``,
    when given, keeps only those of the bundles (the ones the caller may see)."""
    criteria: list[ColumnElement[bool]] = []
    if bundles is not None:
        criteria.append(ApplicationRow.bundle.in_(sorted(bundles)))
    if job_name is not None:
        criteria.append(ApplicationRow.job_name == job_name)
    if states is not None:
        criteria.append(ApplicationRow.state.in_([AppState(state).value for state in states]))
    if triggered_by is not None:
        criteria.append(ApplicationRow.triggered_by == triggered_by)
    if tag is not None:
        criteria.append(_has_tag(*tag))
    if search:
        criteria.append(
            or_(
                ApplicationRow.id.icontains(search, autoescape=True),
                ApplicationRow.name.icontains(search, autoescape=True),
            )
        )
    return criteria


def _has_tag(key: str, value: str | None) -> ColumnElement[bool]:
    if '"' in key or "\\" in key:
        # SQLite's JSON paths cannot quote these, and no valid tag key holds them
        return false()
    tag_value: ColumnElement[str] = ApplicationRow.tags[key].as_string()
    return tag_value.is_not(None) if value is None else tag_value == value
