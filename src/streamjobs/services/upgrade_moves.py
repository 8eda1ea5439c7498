"""What every step of an upgrade shares: who the server acts as, how it starts an application,
which refusals are final, and the move of the upgrade's row with its event.

The server carries an upgrade out on behalf of whoever asked for it (``acting_for``): that
person was allowed to ask, and what the upgrade does after is its own doing. A move names the
status the upgrade was read in (``UpgradeRepository.move``), so two servers never both carry out
one step; the upgrade's move and the application's event land in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import AlreadyExists, Conflict, Forbidden, InvalidInput, NotFound
from streamjobs.domain.manifest import UpgradePolicy
from streamjobs.domain.upgrades import UpgradeStatus
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.upgrades import UpgradeRecord


class Starter(Protocol):
    """Starts a job's next application on its current spec, in the caller's transaction
    (``ApplicationService.start_in``): the checks, the quota and the audit of a Run; from a copy
    of ``from_snapshot`` when given (``allow_replay``: even when outputs went on past it), or on
    a fresh checkpoint (``fresh_checkpoint``: the one it had kept as a snapshot of kind
    replaced). ``note`` is the new application's first event, ``detail`` more for the audit.
    Raises what a Run refuses with (``Conflict``, ``CannotRun``, ``NotFound``...)."""

    def start_in(
        self,
        repos: Repositories,
        job_name: str,
        *,
        actor: Actor,
        from_snapshot: str | None = None,
        allow_replay: bool = False,
        fresh_checkpoint: bool = False,
        note: tuple[str, str] | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> ApplicationRecord: ...


REFUSALS = (InvalidInput, NotFound, AlreadyExists, Conflict, Forbidden)
"""What a step is refused with for good. A ``StaleVersion`` (a ``Conflict``) is not: callers
raise it again, and the next tick reads afresh."""


def acting_for(upgrade: UpgradeRecord, *, what: str = "upgrade") -> Actor:
    """The actor the server carries ``upgrade`` out as: the person who asked for it, with the
    upgrade as the source of what it does (audit entries, who started the applications)."""
    return Actor(Principal(upgrade.requested_by, is_admin=True), source=f"{what} {upgrade.id}")


def rollback_window(spec: Mapping[str, Any]) -> int:
    """``spec.upgrade.rollbackWithinSeconds`` of a resolved spec (its default when unreadable)."""
    body = spec.get("spec")
    block = body.get("upgrade") if isinstance(body, Mapping) else None
    try:
        return UpgradePolicy.model_validate(block or {}).rollback_within_seconds
    except ValidationError:
        return UpgradePolicy().rollback_within_seconds


def application(repos: Repositories, application_id: str | None) -> ApplicationRecord | None:
    """The application ``application_id``; None for none or one that is gone."""
    return repos.applications.find(application_id) if application_id else None


@dataclass(frozen=True)
class Step:
    """One move of an upgrade: where to, what changes, the event on which application."""

    status: UpgradeStatus
    changes: dict[str, Any]
    event: tuple[str, str, str] | None = None
    """(application id, kind, message)."""


class UpgradeMoves:
    """Reads upgrades and writes their moves."""

    def __init__(self, *, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def read(self, upgrade_id: str) -> UpgradeRecord:
        with self._store.reading() as repos:
            return repos.upgrades.get(upgrade_id)

    def move(self, upgrade: UpgradeRecord, step: Step) -> UpgradeRecord:
        """Move ``upgrade`` (from the status it was read in) by ``step``; the upgrade after
        (as another server moved it, when one did first)."""

        def write() -> UpgradeRecord | None:
            with self._store.transaction() as repos:
                moved = repos.upgrades.move(
                    upgrade.id, expected=upgrade.status, status=step.status, **step.changes
                )
                if moved is not None and step.event is not None:
                    application_id, kind, message = step.event
                    repos.applications.add_event(
                        application_id, at=self._clock.now(), kind=kind, message=message
                    )
                return moved

        return retried_on_contention(write) or self.read(upgrade.id)

    def end(
        self, upgrade: UpgradeRecord, status: UpgradeStatus, reason: str, *, on: str | None = None
    ) -> UpgradeRecord:
        """End the upgrade with ``reason``, an ``upgrade-failed`` event on application ``on``
        when given."""
        event = (on, "upgrade-failed", f"upgrade {upgrade.id} failed: {reason}") if on else None
        changes = {"finished_at": self._clock.now(), "reason": reason}
        return self.move(upgrade, Step(status, changes, event))
