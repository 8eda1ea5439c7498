"""What lies at a job's checkpoint on disk: whether it holds a stream's state, and taking it away.

A pipeline's queries keep their offsets and commits in its checkpoint (one directory per output
under it), and Spark resumes from whatever it finds there. So a new job whose checkpoint already
holds state (a deleted job's of the same name, usually) does not start from the beginning of its
inputs: creating it says so (``resumed_state_warning``). Deleting a job leaves its checkpoint
unless asked; asked, ``CheckpointRemoval`` takes it away, but only a directory that is surely the
job's own checkpoint: its claimed checkpoint (``location_claims``), on this machine, strictly
inside the checkpoint root (a derived one) or one of its bundle's data roots (one it names), never
the root itself, never through a symbolic link, never holding the server's home, any bundle's data
root or a place a job claims (``refuse_holding``), and holding nothing but what the runner and
Spark write there (``foreign_entries``): the server deletes with its own privileges, so a
manifest naming a directory must not be enough to make it go.

The removal is in two steps around the transaction that deletes the job: the directory is first
renamed aside (one atomic step; put back if the transaction fails), then removed once the job is
gone, so a failure leaves either the job with its checkpoint or neither.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from streamjobs.domain.errors import Conflict
from streamjobs.domain.location_claims import CHECKPOINT_FIELD, Claim, ClaimKind, claim_uri
from streamjobs.domain.locations import LocationError, is_within, local_path, normalized_uri
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.spec import derived_checkpoint_location

STATE_ENTRIES = frozenset({"offsets", "commits", "metadata"})
"""What shows that a Spark streaming query has run from a checkpoint."""
QUERY_ENTRIES = STATE_ENTRIES | {"sources", "state"}
"""Everything a Spark streaming query writes into its checkpoint directory, besides the hidden
checksums and temporary files of Hadoop's file system (``HIDDEN_SUFFIXES``)."""
HIDDEN_SUFFIXES = (".crc", ".tmp")
"""``.metadata.crc``, ``.metadata.<uuid>.tmp``: Hadoop's checksums and Spark's files being
written, hidden (their names start with a dot)."""
_ASIDE_PREFIX = ".deleted-"
_NAMES_SHOWN = 5

_log = logging.getLogger(__name__)


def job_checkpoint(job: StreamingJob, checkpoint_root: str) -> str | None:
    """Where ``job`` checkpoints (its own ``checkpointLocation`` or the derived one), or None
    when it has no checkpoint the server knows of (a python or jvm application)."""
    pipeline = job.spec.pipeline
    if pipeline is None:
        return None
    explicit = pipeline.streaming.checkpoint_location
    return explicit if explicit is not None else derived_checkpoint_location(job, checkpoint_root)


def holds_state(location: str) -> bool:
    """Whether the local directory at ``location`` holds a streaming query's state, itself or in
    a directory right below it (the runner's per-output checkpoints). False for locations that
    are not on this machine, which are not looked into."""
    directory = _local_directory(location)
    if directory is None:
        return False
    if _has_state_entry(directory):
        return True
    try:
        children = list(os.scandir(directory))
    except OSError:
        return False
    return any(
        child.is_dir(follow_symlinks=False) and _has_state_entry(Path(child.path))
        for child in children
    )


def resumed_state_warning(job: StreamingJob, checkpoint_root: str) -> str | None:
    """What to tell whoever creates ``job`` when its checkpoint already holds state; None when
    its first run starts afresh."""
    location = job_checkpoint(job, checkpoint_root)
    if location is None or not holds_state(location):
        return None
    return (
        f"the checkpoint of job {job.metadata.name!r}, {normalized_uri(location)}, already holds "
        "a stream's state (offsets and commits an earlier job left): its first run resumes "
        "from there, not from the start of its inputs. To start afresh, delete that directory "
        f"before running it, or set {CHECKPOINT_FIELD} to a new location"
    )


def kept_checkpoint_notice(job_name: str, location: str) -> str:
    """What to tell whoever deleted a job whose checkpoint at ``location`` stays."""
    return (
        f"the checkpoint of job {job_name!r} stays at {normalized_uri(location)}: a job created "
        "under this name again resumes from it; remove that directory to start afresh"
    )


def existing_checkpoint(claims: Sequence[Claim], checkpoint_root: str) -> str | None:
    """The URI of the checkpoint among a job's ``claims`` if there is a directory there."""
    for claim in claims:
        if claim.kind is ClaimKind.CHECKPOINT:
            uri = claim_uri(claim, checkpoint_root)
            directory = _local_directory(uri)
            return uri if directory is not None and directory.is_dir() else None
    return None


class KeptPlace(NamedTuple):
    """A place no checkpoint removal may take with it, and how to name it to the deleter."""

    location: str
    described: str
    """``the data root file:///data of bundle 'etl'``, ``the input file:///in of job 'a'``."""


@dataclass(frozen=True)
class _SetAside:
    original: Path
    aside: Path


class CheckpointRemoval:
    """Takes a deleted job's checkpoint away: ``refuse_holding`` what must stay, then
    ``set_aside`` before the job's deletion commits, then ``finish`` after it or ``undo`` if it
    did not."""

    def __init__(
        self,
        claim: Claim,
        *,
        checkpoint_root: str,
        data_roots: Sequence[str],
        protected_roots: Sequence[str],
    ) -> None:
        self.uri = claim_uri(claim, checkpoint_root)
        allowed = [checkpoint_root] if claim.derived else list(data_roots)
        self._directory = _owned_directory(self.uri, allowed, protected_roots)
        self.resolved_uri = Path(os.path.realpath(self._directory)).as_uri()
        """The checkpoint's URI with symbolic links above it resolved (``uri`` when none)."""
        self._set_aside: _SetAside | None = None

    def refuse_holding(self, kept: Sequence[KeptPlace]) -> None:
        """``Conflict`` naming the first of ``kept`` that the checkpoint is or holds."""
        for place in kept:
            if self._holds(place.location):
                raise Conflict(f"{self._refused}: it holds {place.described}; nothing was deleted")

    def set_aside(self) -> None:
        """Rename the checkpoint out of the way (nothing to do when it is not there);
        ``Conflict`` when it holds anything but a checkpoint's entries, or the rename fails."""
        directory = self._directory
        if not directory.exists():
            return
        if not directory.is_dir():
            raise Conflict(f"{self._refused}: it is not a directory; nothing was deleted")
        try:
            foreign = foreign_entries(directory)
        except OSError as error:
            raise Conflict(
                f"{self._refused}: cannot look into it: {error.strerror}; nothing was deleted"
            ) from None
        if foreign:
            raise Conflict(
                f"{self._refused}: it holds what is not a streaming checkpoint's "
                f"({_shown(foreign)}); nothing was deleted"
            )
        aside = directory.with_name(f"{_ASIDE_PREFIX}{directory.name}-{uuid.uuid4().hex[:12]}")
        try:
            directory.rename(aside)
        except OSError as error:
            raise Conflict(f"cannot delete the checkpoint {self.uri}: {error.strerror}") from None
        self._set_aside = _SetAside(directory, aside)

    @property
    def aside(self) -> Path | None:
        """Where the checkpoint was set aside, until it is put back or removed."""
        return self._set_aside.aside if self._set_aside is not None else None

    def undo(self) -> None:
        """Put the checkpoint back where it was; ``OSError`` when it cannot be (it then stays
        at ``aside``)."""
        if self._set_aside is not None:
            self._set_aside.aside.rename(self._set_aside.original)
            self._set_aside = None

    def finish(self) -> bool:
        """Remove what was set aside; whether there was a checkpoint to remove. What cannot be
        removed (files another user made unwritable) is logged and left, out of the job's way.
        """
        if self._set_aside is None:
            return False
        aside = self._set_aside.aside

        def report(_function: object, path: str, error: tuple[type, BaseException, object]) -> None:
            _log.warning("could not remove %s of a deleted job's checkpoint: %s", path, error[1])

        shutil.rmtree(aside, onerror=report)
        return True

    @property
    def _refused(self) -> str:
        return f"the checkpoint {self.uri} is not deleted, nor is its job"

    def _holds(self, location: str) -> bool:
        """Whether ``location`` (symbolic links above it resolved too) is the checkpoint or lies
        inside it."""
        candidates = [location]
        local = _local_directory(location)
        if local is not None:
            candidates.append(os.path.realpath(local))
        for candidate in candidates:
            with contextlib.suppress(LocationError):
                if is_within(candidate, self.uri) or is_within(candidate, self.resolved_uri):
                    return True
        return False


def foreign_entries(directory: Path) -> list[str]:
    """What ``directory`` holds that the runner does not write in a checkpoint, as paths relative
    to it, sorted: the runner gives each query (an output, or ``foreachBatch``) a directory of its
    own, holding only Spark's ``QUERY_ENTRIES`` and hidden checksums and temporary files."""
    foreign = []
    for entry in _entries(directory):
        if _is_hidden_scratch(entry):
            continue
        if not entry.is_dir(follow_symlinks=False):
            foreign.append(entry.name)
            continue
        foreign += [
            f"{entry.name}/{inner.name}"
            for inner in _entries(Path(entry.path))
            if inner.name not in QUERY_ENTRIES and not _is_hidden_scratch(inner)
        ]
    return sorted(foreign)


def _owned_directory(uri: str, roots: Sequence[str], protected_roots: Sequence[str]) -> Path:
    """The local directory at ``uri`` when it is safe to delete as a job's checkpoint: strictly
    inside one of ``roots`` (symbolic links resolved), holding none of ``protected_roots``, not
    itself a link; ``Conflict`` saying why not otherwise."""
    refused = f"the checkpoint {uri} is not deleted"
    directory = _local_directory(uri)
    if directory is None:
        raise Conflict(f"{refused}: only checkpoints on this machine (file://) can be deleted")
    if directory.is_symlink():
        raise Conflict(f"{refused}: it is a symbolic link")
    real = os.path.realpath(directory)
    if not any(_strictly_inside(real, root) for root in roots):
        raise Conflict(
            f"{refused}: it does not lie inside the checkpoint root or its bundle's data roots"
        )
    for protected in protected_roots:
        with contextlib.suppress(LocationError):
            if is_within(protected, real) or is_within(protected, uri):
                raise Conflict(f"{refused}: it holds the server's own files")
    return directory


def _strictly_inside(path: str, root: str) -> bool:
    """Whether the resolved ``path`` lies below ``root`` (resolved too), not at it."""
    root_directory = _local_directory(root)
    if root_directory is None:
        return False
    real_root = os.path.realpath(root_directory)
    return normalized_uri(path) != normalized_uri(real_root) and is_within(path, real_root)


def _local_directory(location: str) -> Path | None:
    try:
        path = local_path(location)
    except LocationError:
        return None
    return Path(path) if path is not None else None


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as entries:
        return list(entries)


def _is_hidden_scratch(entry: os.DirEntry[str]) -> bool:
    return (
        entry.name.startswith(".")
        and entry.name.endswith(HIDDEN_SUFFIXES)
        and entry.is_file(follow_symlinks=False)
    )


def _shown(names: Sequence[str]) -> str:
    """The first few of ``names``, and how many more there are."""
    shown = ", ".join(names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _has_state_entry(directory: Path) -> bool:
    return any((directory / entry).exists() for entry in STATE_ENTRIES)
