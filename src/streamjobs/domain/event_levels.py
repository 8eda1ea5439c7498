"""How serious each kind of application event is: one rule for the UI, the console and the CLI.

An application's events (``ApplicationHistory.add_event``) carry a kind, e.g. ``restarting``,
and no level of their own. The web UI's Events tab and its warning count, and the server's
console lines for the supervisor's decisions, all read the level from ``event_level``, so an
event is never a warning in one place and information in another.

Information is what was asked or expected (a run, a stop or an abort by a person, a driver
running, a completion); a warning is something that went wrong and is being dealt with (a
failed submission, a silent driver, a restart, jars that could not be resolved, a suspension);
an error is a failure of the application or of one of its queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType


class EventLevel(StrEnum):
    """How serious an event is; the values are what the UI shows and styles."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


_I, _W, _E = EventLevel.INFO, EventLevel.WARNING, EventLevel.ERROR

EVENT_LEVELS: Mapping[str, EventLevel] = MappingProxyType(
    {
        "run-requested": _I,
        "stop-requested": _I,
        "abort-requested": _I,
        "suspend-requested": _I,
        "resumed": _I,
        "jars-resolving": _I,
        "jars-resolved": _I,
        "jars-unresolved": _W,
        "submitted": _I,
        "submission-failed": _W,
        "driver-recovered": _I,
        "driver-running": _I,
        "first-batch-committed": _I,
        "driver-silent": _W,
        "driver-exited": _I,
        "query-failed": _E,
        "restarting": _W,
        "suspended": _W,
        "completed": _I,
        "stopped": _I,
        "aborted": _I,
        "failed": _E,
        "health-firing": _W,
        "health-recovered": _I,
        "snapshot-taken": _I,
        "snapshot-failed": _W,
        "started-from-snapshot": _I,
        "started-fresh": _I,
        "upgrade-requested": _I,
        "upgrade-started": _I,
        "upgraded": _I,
        "upgrade-watching": _I,
        "upgrade-succeeded": _I,
        "upgrade-rolling-back": _W,
        "rolled-back": _W,
        "upgrade-failed": _E,
    }
)
"""The level of every event kind the server records. Only a person asks for an abort (the
API's Abort, or a Delete that aborts), so ``aborted`` is information like ``stopped``."""


def event_level(kind: str) -> EventLevel:
    """The level of an event of ``kind``; information for a kind this version does not know
    (one an older server recorded)."""
    return EVENT_LEVELS.get(kind, EventLevel.INFO)
