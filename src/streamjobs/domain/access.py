"""Who is acting: the principal every service call is made on behalf of."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """An authenticated user or service account, as the services see it."""

    name: str
    is_admin: bool = False


@dataclass(frozen=True)
class Actor:
    """A principal together with where the request came from, for the audit trail."""

    principal: Principal
    source: str | None = None

    @property
    def name(self) -> str:
        return self.principal.name
