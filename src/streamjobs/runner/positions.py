"""Where an output stands, read from what its sink leaves on a local disk.

The runner records these positions in a snapshot at its batch boundary; the server reads them
again before a start from a snapshot, to refuse one older than its outputs. Both ends read the
same files the same way, so this module needs nothing but the standard library and the domain
(``runner`` imports no Spark here, and the server may import it).

File sinks keep ``<path>/_spark_metadata/<batch>``; Delta keeps ``<path>/_delta_log/<version>.json``
with a ``txn`` action per streaming write. Iceberg needs its catalog, so the runner asks Spark
(``runner.snapshots``) and this module says "not tracked" for it. Nothing here follows a
symbolic link out of the output's directory or reads more than a bounded amount.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from streamjobs.domain.snapshots import (
    OutputPosition,
    delta_commit_file,
    delta_transaction,
    delta_versions,
    last_batch,
)

FILE_FORMATS = frozenset({"parquet", "json", "csv", "text", "orc"})
UNTRACKED_FORMATS = frozenset({"kafka", "jdbc", "console", "noop"})
_COMMITS_READ = 20
"""How many of the newest Delta commits are searched for the writer's last transaction."""
_MAX_COMMIT_BYTES = 16 * 1024 * 1024


def read_position(
    output: str, output_format: str, path: str | None, *, txn_app_id: str | None = None
) -> OutputPosition:
    """The position of ``output`` (its key), written as ``output_format`` at the local directory
    ``path`` (None: a table or a location off this machine, not tracked here)."""
    if output_format in UNTRACKED_FORMATS or path is None or output_format == "iceberg":
        return OutputPosition(output=output, format=output_format, tracked=False)
    directory = Path(path)
    if output_format == "delta":
        return _delta_position(output, directory, txn_app_id)
    if output_format in FILE_FORMATS:
        batch = last_batch(_names(directory / "_spark_metadata"))
        return OutputPosition(output=output, format=output_format, batch_id=batch)
    return OutputPosition(output=output, format=output_format, tracked=False)


def _delta_position(output: str, directory: Path, txn_app_id: str | None) -> OutputPosition:
    log = directory / "_delta_log"
    versions = delta_versions(_names(log))
    if not versions:
        return OutputPosition(output=output, format="delta")
    txn_version = None
    if txn_app_id:
        for version in versions[:_COMMITS_READ]:
            text = _read_bounded(log / delta_commit_file(version))
            txn_version = delta_transaction(text, txn_app_id) if text else None
            if txn_version is not None:
                break
    return OutputPosition(
        output=output,
        format="delta",
        version=versions[0],
        txn_app_id=txn_app_id,
        txn_version=txn_version,
    )


def query_id(checkpoint: str) -> str | None:
    """The id Spark gave the query whose checkpoint is ``checkpoint`` (its ``metadata`` file):
    the ``appId`` of the transactions Delta's streaming sink writes for it."""
    text = _read_bounded(Path(checkpoint) / "metadata")
    if not text:
        return None
    try:
        found = json.loads(text.splitlines()[0]).get("id")
    except (ValueError, IndexError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _names(directory: Path) -> list[str]:
    """The entries of ``directory``, none if it is not a real directory (or is a link)."""
    try:
        if directory.is_symlink() or not directory.is_dir():
            return []
        return os.listdir(directory)
    except OSError:
        return []


def _read_bounded(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_COMMIT_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
