"""Which jobs use a connection, as one person may be told it.

The Connections page lists, beside each connection, the jobs whose datasets name it: the reason
its deletion is refused. A job the person may not see is not named, only counted, exactly as the
job pages keep it from them (``services.access.visible_to``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from streamjobs.domain.access import Actor
from streamjobs.services.access import visible_to
from streamjobs.services.connections import jobs_using
from streamjobs.store.db import Store


@dataclass(frozen=True)
class ConnectionUsers:
    """The jobs using one connection: those the person may see by name, the others counted."""

    visible: tuple[str, ...] = ()
    hidden: int = 0

    @property
    def count(self) -> int:
        return len(self.visible) + self.hidden


def connection_users(
    store: Store, actor: Actor, connections: Iterable[str]
) -> dict[str, ConnectionUsers]:
    """For each of ``connections`` (by name), the jobs whose datasets use it."""
    found: dict[str, ConnectionUsers] = {}
    with store.reading() as repos:
        bundles = visible_to(repos, actor)
        for connection in connections:
            visible: list[str] = []
            hidden = 0
            for name, job in sorted(jobs_using(repos, connection).items()):
                bundle = job.spec.bundle if job is not None else repos.jobs.bundle_of(name)
                if bundles is None or bundle in bundles:
                    visible.append(name)
                else:
                    hidden += 1
            found[connection] = ConnectionUsers(visible=tuple(visible), hidden=hidden)
    return found
