"""The supervisor's decisions as the server's console shows them, one line each.

Each action the loop applies with a note (an attempt submitted, a driver running, a failure with
its cause, a restart in N s, an application completed, stopped or aborted) is also logged here,
beside uvicorn's access log (``streamjobs.console_log``): whoever started the server sees what
happens to the jobs without opening the UI. A line's level is its event's
(``domain.event_levels``), as the UI shows it.
"""

from __future__ import annotations

import logging

from streamjobs.domain.event_levels import EventLevel, event_level
from streamjobs.store import ApplicationRecord

log = logging.getLogger("streamjobs.supervisor.decisions")

LOGGING_LEVELS = {
    EventLevel.INFO: logging.INFO,
    EventLevel.WARNING: logging.WARNING,
    EventLevel.ERROR: logging.ERROR,
}


def log_decision(application: ApplicationRecord, note: tuple[str, str]) -> None:
    """One console line for the decision ``note`` (kind, message) about ``application``."""
    kind, message = note
    log_event(application.name, kind, message)


def log_event(application: str, kind: str, message: str) -> None:
    """One console line for an event of ``kind`` about ``application`` (a name or an id)."""
    log.log(LOGGING_LEVELS[event_level(kind)], "%s: %s", application, message)
