"""Settings → Audit: every change, who made it, when, to what and from where (admins only, as
``/api/v1/audit``), newest first, filtered by who, the kind of resource and the action, a page
at a time."""

from __future__ import annotations

import json
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.services.audit_log import AuditQuery
from streamjobs.services.resources import LARGEST_INTEGER
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()
AUDIT_PAGE = "/settings/audit"
PAGE_SIZE = 50


@router.get(AUDIT_PAGE)
def audit_page(
    request: Request,
    by: Annotated[str, Query(alias="actor")] = "",
    kind: Annotated[str, Query()] = "",
    action: Annotated[str, Query()] = "",
    offset: Annotated[str, Query()] = "0",
    actor: Actor = Depends(page_actor),
) -> Response:
    filters = {"actor": by.strip(), "kind": kind.strip(), "action": action.strip()}
    errors: list[FieldError] = []
    try:
        start = int(offset or "0")
    except ValueError:
        start = 0
        errors.append(FieldError("offset", f"{offset!r} is not a whole number"))
    if not 0 <= start <= LARGEST_INTEGER:
        errors.append(FieldError("offset", f"must be between 0 and {LARGEST_INTEGER}"))
    if errors:
        raise InvalidInput(errors)
    query = AuditQuery(
        actor=filters["actor"] or None,
        resource_kind=filters["kind"] or None,
        action=filters["action"] or None,
        limit=PAGE_SIZE,
        offset=start,
    )
    page = services_of(request).audit.list(query, actor=actor)
    shown = {key: value for key, value in filters.items() if value}

    def link(at: int) -> str:
        return f"{AUDIT_PAGE}?{urlencode({**shown, 'offset': at})}"

    end = page.offset + len(page.items)
    return render(
        request,
        "audit.html",
        nav="audit",
        entries=[(entry, _detail(entry.detail)) for entry in page.items],
        filters=filters,
        total=page.total,
        first=page.offset + 1 if page.items else 0,
        last=end,
        previous=link(max(0, page.offset - PAGE_SIZE)) if page.offset > 0 else None,
        next=link(end) if end < page.total else None,
    )


def _detail(detail: dict[str, object]) -> str:
    """The entry's detail on one line: ``key=value`` pairs, values as JSON."""
    return ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in sorted(detail.items())
    )
