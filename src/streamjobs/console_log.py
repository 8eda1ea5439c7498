"""What the server's console shows beside uvicorn's access log: the supervisor's lines.

uvicorn configures its own loggers only; the supervisor's decisions (an attempt submitted, a
driver running, a failure with its cause, a restart in N s: ``supervisor.decisions``) and its
other information (jars being resolved) would otherwise go nowhere below a warning. This adds
the ``streamjobs.supervisor`` loggers to uvicorn's configuration, with uvicorn's own handler and
format, so the console reads as one log:

    INFO:     127.0.0.1:50412 - "POST /api/v1/jobs/ticks/run HTTP/1.1" 201 Created
    INFO:     ticks-1: attempt 1 submitted
    INFO:     ticks-1: attempt 1: the driver is running
"""

from __future__ import annotations

import copy
from typing import Any

CONSOLE_LOGGERS = ("streamjobs.supervisor",)
"""streamjobs' loggers whose information the console shows (warnings and errors of every
logger reach it anyway)."""


def server_log_config() -> dict[str, Any]:
    """uvicorn's logging configuration, with ``CONSOLE_LOGGERS`` at INFO on its handler."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    for name in CONSOLE_LOGGERS:
        config["loggers"][name] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config
