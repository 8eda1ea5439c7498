"""The supervisor's upgrade step: move every upgrade in progress on, each tick.

The loop runs ``UpgradeStep.run`` after the tick's actions and the snapshot step, so an old
application that stopped in this tick, and the upgrade snapshot collected in it, are seen at
once: the new spec starts in the same tick. What each upgrade's move is lies in the upgrade
service (``services.upgrade_progress``); this step only walks them. One upgrade's failure (a
store error) is logged and never stops the others; it is tried again at the next tick.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from streamjobs.domain.errors import StreamjobsError

log = logging.getLogger(__name__)


class Upgrades(Protocol):
    """What the step asks of the upgrade service (``services.upgrades.UpgradeService``).

    Contract: ``active`` lists the ids of the upgrades in progress, oldest first; ``advance``
    moves one on as far as it can go now (starting, watching, rolling back), idempotent and
    safe to call from two servers at once. Neither asks who acts: the server does, for whoever
    asked for the upgrade.
    """

    def active(self) -> Sequence[str]: ...

    def advance(self, upgrade_id: str) -> object: ...


class UpgradeStep:
    """Advances every upgrade in progress (see the module)."""

    def __init__(self, *, upgrades: Upgrades) -> None:
        self._upgrades = upgrades

    def run(self) -> None:
        """One pass over the upgrades in progress; never raises."""
        try:
            active = self._upgrades.active()
        except Exception:
            log.exception("supervisor: reading the upgrades in progress failed")
            return
        for upgrade_id in active:
            try:
                self._upgrades.advance(upgrade_id)
            except StreamjobsError as error:  # changed meanwhile: the next tick sees it anew
                log.info("supervisor: upgrade %s: %s", upgrade_id, error.detail)
            except Exception:
                log.exception("supervisor: moving upgrade %s on failed", upgrade_id)
