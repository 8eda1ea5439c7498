"""Which server answers, and which server runs the supervisor: ``GET /healthz`` says it, and so
does the web UI's footer on every page.

Several servers may serve one PostgreSQL store; one of them, the holder of the supervisor's
lease, runs the supervisor (``supervisor.leadership``). The server puts what it knows about
that on the application (``app.state.supervision``, by ``streamjobs.composition``): its
leadership when it would supervise, else ``WithoutSupervisor``, which only reads the lease.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from fastapi import Request

from streamjobs.domain.errors import StoreUnavailable
from streamjobs.http.sessions import services_of
from streamjobs.store.db import Store
from streamjobs.store.leases import SUPERVISOR_LEASE, Leader

Role = Literal["leader", "standby", "none"]


class Supervision(Protocol):
    """This server's part in supervising.

    Contract: ``server_name`` names this server; ``role()`` is "leader" while it runs the
    supervisor, "standby" while it would but another server does, "none" when it runs no
    supervisor; ``leader()`` is the server that runs it now (None: none does, or the store
    cannot be asked now). Both answer quickly and never raise.
    """

    @property
    def server_name(self) -> str: ...

    def role(self) -> Role: ...

    def leader(self) -> Leader | None: ...


@dataclass(frozen=True)
class WithoutSupervisor:
    """A server that runs no supervisor: it tells who does from the lease in the store."""

    store: Store
    server_name: str

    def role(self) -> Role:
        return "none"

    def leader(self) -> Leader | None:
        try:
            with self.store.reading() as repos:
                lease = repos.leases.current(SUPERVISOR_LEASE)
        except StoreUnavailable:
            return None
        return lease.leader if lease is not None else None


def supervision_of(request: Request) -> Supervision:
    """What the application was told about supervising; an application put together without
    it (over bare services) runs no supervisor."""
    supervision: Supervision | None = getattr(request.app.state, "supervision", None)
    if supervision is None:
        services = services_of(request)
        supervision = WithoutSupervisor(services.store, services.settings.resolved_server_name)
    return supervision


def described(supervision: Supervision) -> dict[str, object]:
    """The role as ``/healthz`` tells it: ``role``, ``server`` and ``leader`` ({name, url})."""
    leader = supervision.leader()
    return {
        "role": supervision.role(),
        "server": supervision.server_name,
        "leader": None if leader is None else {"name": leader.name, "url": leader.url},
    }
