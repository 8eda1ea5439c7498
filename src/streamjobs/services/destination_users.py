"""Which jobs subscribe to a notification destination, as one person may be told it.

Settings -> Notifications shows, beside each destination, the jobs whose ``spec.notifications``
name it: the reason its deletion is refused. A job the person may not see is not named, only
counted, as the Connections page does (``services.access.visible_to``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from streamjobs.domain.access import Actor
from streamjobs.services.access import visible_to
from streamjobs.services.destination_references import jobs_naming
from streamjobs.store.db import Store


@dataclass(frozen=True)
class Subscribers:
    """The jobs subscribed to one destination: those the person may see by name, the others
    counted."""

    visible: tuple[str, ...] = ()
    hidden: int = 0

    @property
    def count(self) -> int:
        return len(self.visible) + self.hidden


def destination_users(
    store: Store, actor: Actor, destinations: Iterable[str]
) -> dict[str, Subscribers]:
    """For each of ``destinations`` (by name), the jobs subscribed to it."""
    found: dict[str, Subscribers] = {}
    with store.reading() as repos:
        bundles = visible_to(repos, actor)
        for destination in destinations:
            visible: list[str] = []
            hidden = 0
            for job in jobs_naming(repos, destination):
                if bundles is None or repos.jobs.bundle_of(job) in bundles:
                    visible.append(job)
                else:
                    hidden += 1
            found[destination] = Subscribers(visible=tuple(visible), hidden=hidden)
    return found
