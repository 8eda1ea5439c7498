"""Ticks only while leading, each fenced by the lease's token (``supervisor.leadership``).

``LeaderTicks.run`` is one pass of the supervisor's loop: nothing while another server leads; a
tick inside ``Store.fenced(token)`` while this one does, so every transaction the tick opens,
through whichever service, is refused once the lease has passed to a newer token. The first
refused write ends the tick (the loop lets ``Fenced`` through) and this server's leadership at
once (``Leading.lost``). Whenever the token this server leads under changes, the loop is told
(``begin``) to start afresh, as a newly started server's supervisor would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from streamjobs.store.db import Store
from streamjobs.store.leases import Fenced
from streamjobs.supervisor.leadership import Leading

log = logging.getLogger(__name__)

Outcome = TypeVar("Outcome")


class LeaderTicks:
    """Runs the loop's ticks under its leadership; see the module docstring."""

    def __init__(
        self, *, store: Store, leadership: Leading, begin: Callable[[int | None], None]
    ) -> None:
        """``begin(token)``: the loop starts leading under ``token`` (None: stops leading)."""
        self._store = store
        self._leadership = leadership
        self._begin = begin
        self._term: int | None = None
        """The token the current time as the leader began with (None: not leading)."""

    def run(self, tick: Callable[[], list[Outcome]]) -> list[Outcome]:
        """``tick()`` fenced by the lease's token while this server leads; else nothing."""
        leadership = self._leadership
        token = leadership.token
        if token != self._term:
            self._start_term(token)
        if token is None:
            return []
        outcomes: list[Outcome] = []
        with self._store.fenced(token, hold_limit_seconds=leadership.lease_seconds) as fence:
            try:
                outcomes = tick()
            except Fenced as fenced:
                if fence.refusal is None:  # refused before the store was asked (``confirm``)
                    log.warning("supervisor: %s", fenced.detail)
                    return []
        if fence.refusal is not None:
            leadership.lost(token)
            self._start_term(None)
            return []
        return outcomes

    def confirm(self) -> None:
        """``Fenced`` unless this server still leads under the token the tick began with: a
        driver is started or signalled only then (the store refuses stale writes itself)."""
        if self._leadership.token != self._term:
            raise Fenced(
                "the supervisor's lease ran out during its tick: the driver is not started or "
                "signalled; the next leader's tick sees the application anew"
            )

    def _start_term(self, token: int | None) -> None:
        if token is None:
            log.info("supervisor: not supervising: this server does not hold the lease")
        else:
            log.info("supervisor: leading under lease token %d: re-reading every driver", token)
        self._term = token
        self._begin(token)
