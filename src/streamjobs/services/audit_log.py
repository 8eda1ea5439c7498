"""Reading the audit trail: every change, who made it, when and from where (admins only)."""

from __future__ import annotations

from dataclasses import dataclass

from streamjobs.domain.access import Actor, require_admin
from streamjobs.services.resources import Page, check_page
from streamjobs.store.audit import AuditEntry
from streamjobs.store.db import Store


@dataclass(frozen=True)
class AuditQuery:
    """Which entries to list; ``action`` is a prefix (``job.`` for every job action)."""

    actor: str | None = None
    resource_kind: str | None = None
    action: str | None = None
    limit: int = 100
    offset: int = 0


class AuditLogService:
    def __init__(self, *, store: Store) -> None:
        self._store = store

    def list(self, query: AuditQuery, *, actor: Actor) -> Page[AuditEntry]:
        require_admin(actor.principal, "the audit trail")
        check_page(query.limit, query.offset)
        filters = {
            "actor": query.actor,
            "resource_kind": query.resource_kind,
            "action": query.action,
        }
        with self._store.transaction() as repos:
            items = repos.audit.list(limit=query.limit, offset=query.offset, **filters)
            total = repos.audit.count(**filters)
        return Page(items=items, total=total, limit=query.limit, offset=query.offset)
