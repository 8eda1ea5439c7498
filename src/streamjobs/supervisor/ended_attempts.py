"""Private files left behind by attempts that ended while no server was watching them.

The loop removes an attempt's private files (``launch.attempt_cleanup``) when it records that
its driver exited. A server that was killed between the two, or that predates this rule, leaves
some behind; so the first tick of a server removes those of every attempt the store says has
ended. A directory the store does not know as an ended attempt is left alone: its driver may
still be running, not yet adopted (a server that died between starting it and recording its
pid, see ``submissions``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from streamjobs.launch.attempt_cleanup import (
    directories_holding_private_files,
    remove_private_files,
)
from streamjobs.store.db import Store

log = logging.getLogger(__name__)


def remove_files_of_ended_attempts(store: Store, apps_directory: Path) -> int:
    """Remove the private files of each ended attempt under ``apps_directory``; how many."""
    candidates: dict[str, dict[int, Path]] = {}
    for directory in directories_holding_private_files(apps_directory):
        if directory.name.isdigit():
            candidates.setdefault(directory.parent.name, {})[int(directory.name)] = directory
    if not candidates:
        return 0
    with store.reading() as repos:
        ended = [
            directories[attempt.number]
            for application_id, directories in candidates.items()
            for attempt in repos.applications.attempts(application_id)
            if attempt.ended_at is not None and attempt.number in directories
        ]
    removed = sum(len(remove_private_files(directory)) for directory in ended)
    if removed:
        log.info("removed %d private file(s) of %d ended attempt(s)", removed, len(ended))
    return removed
