"""What the lists of jobs and of applications filter alike: a tag, a search text and the bundles
the caller may see, each bound as a parameter under the same name in both lists' statements.

``JobFilters`` (``job_statements.py``) and ``ApplicationFilters`` (``application_filters.py``)
add their own filters to these.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, bindparam, or_
from sqlalchemy.orm import QueryableAttribute

TagFilter = tuple[str, str | None]
"""``(key, value)`` keeps what is tagged ``key: value``; ``(key, None)`` what has that key."""

LIKE_ESCAPE = "/"
"""The escape character of the LIKE patterns ``escape_like`` makes."""


@dataclass(frozen=True)
class ListFilters:
    """The filters every list has; a list keeps what passes every filter given."""

    tag: TagFilter | None = None
    search: str | None = None
    """Any part of the name (an application's id too), ignoring case."""
    bundles: Collection[str] | None = None
    """Only what belongs to these bundles (the ones the caller may see)."""

    def values(self) -> dict[str, Any]:
        """The values to bind to these filters' criteria (subclasses add theirs)."""
        values: dict[str, Any] = {}
        if self.tag is not None and self.tag[1] is not None:
            values["tag_value"] = self.tag[1]
        if self.search:
            values["search"] = escape_like(self.search)
        if self.bundles is not None:
            values["bundles"] = sorted(self.bundles)
        return values


def in_bundles(bundle: QueryableAttribute[str]) -> ColumnElement[bool]:
    """The criterion of ``ListFilters.bundles``."""
    return bundle.in_(bindparam("bundles", expanding=True))


def contains_search(*texts: QueryableAttribute[str]) -> ColumnElement[bool]:
    """The criterion of ``ListFilters.search``: any of ``texts`` contains it."""
    search: BindParameter[str] = bindparam("search")
    return or_(*(text.icontains(search, escape=LIKE_ESCAPE) for text in texts))


def escape_like(text: str) -> str:
    """``text`` matched literally by LIKE (escaped with ``LIKE_ESCAPE``)."""
    for special in (LIKE_ESCAPE, "%", "_"):
        text = text.replace(special, LIKE_ESCAPE + special)
    return text
