"""``/api/v1/audit``: the audit trail, newest first (admins only)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from streamjobs.api.auth import require_actor, services_of
from streamjobs.domain.access import Actor
from streamjobs.services.audit_log import AuditQuery
from streamjobs.services.resources import LARGEST_INTEGER
from streamjobs.store.audit import AuditEntry

router = APIRouter(tags=["audit"])


@router.get("/api/v1/audit", summary="Every change: who, when, what and from where (admins)")
def list_audit(
    request: Request,
    by: str | None = Query(None, alias="actor", description="Only changes by this user."),
    kind: str | None = Query(None, description="Only changes to this kind: job, secret, …"),
    action: str | None = Query(None, description="Only actions starting with this: job.run"),
    limit: int = Query(100, description="Page size, 1 to 500."),
    offset: int = Query(0, ge=0, le=LARGEST_INTEGER, description="How many to skip."),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    query = AuditQuery(actor=by, resource_kind=kind, action=action, limit=limit, offset=offset)
    page = services_of(request).audit.list(query, actor=actor)
    return {
        "items": [audit_document(entry) for entry in page.items],
        "total": page.total,
        "limit": page.limit,
        "offset": page.offset,
    }


def audit_document(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "action": entry.action,
        "resource": {"kind": entry.resource_kind, "name": entry.resource_name},
        "detail": entry.detail,
        "source": entry.source,
    }
