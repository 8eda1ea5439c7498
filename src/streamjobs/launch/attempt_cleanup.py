"""Removing an attempt's private files once its driver has ended.

A launcher writes two files into an attempt's directory that hold secrets: the driver's report
token and the Spark settings taken from the job's secrets (``attempt_directory.private_files``).
spark-submit and the runner read them as the driver starts; once it has exited they are only
copies of secrets lying on disk, beside logs that are kept as history. The supervisor removes
them when it sees an attempt end, and, when it starts, those of attempts that ended while no
server was watching.
"""

from __future__ import annotations

import logging
from pathlib import Path

from streamjobs.launch.attempt_directory import REPORT_TOKEN_FILE, SECRET_CONF_FILE

log = logging.getLogger(__name__)

PRIVATE_FILES = (REPORT_TOKEN_FILE, SECRET_CONF_FILE)
"""The files of an attempt directory that no one needs once its driver has exited."""


def remove_private_files(directory: Path) -> list[Path]:
    """Remove the ``PRIVATE_FILES`` of the attempt directory ``directory``; those removed.

    A file that is not there is fine; one that cannot be removed is logged and left, so that
    an attempt's end is still recorded.
    """
    removed = []
    for name in PRIVATE_FILES:
        path = directory / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            log.warning("could not remove %s of an ended attempt: %s", path, error.strerror)
            continue
        removed.append(path)
    return removed


def directories_holding_private_files(apps_directory: Path) -> list[Path]:
    """The attempt directories (``<apps>/<application>/<attempt>/``) that still hold one of the
    ``PRIVATE_FILES``, in name order."""
    found = {path.parent for name in PRIVATE_FILES for path in apps_directory.glob(f"*/*/{name}")}
    return sorted(found)
