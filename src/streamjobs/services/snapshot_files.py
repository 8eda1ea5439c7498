"""The files of snapshots: checking, measuring, moving and sealing checkpoint copies, never
through a link.

A staged snapshot, and a job's checkpoint, were written by the job: whatever lies there may be a
trap for the server, which works with its own privileges. So nothing here follows a symbolic
link, opens anything but a regular file (a FIFO would block, a device would not end), or reads
more than it must; a tree holding a link or a special file is refused whole (``Refused``).
A tree is checked after it has been moved out of the job's reach, and made the server's own
(``seal``), so what was checked is what is kept.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.snapshots import MAX_RECORD_BYTES, last_batch

_COPY_CHUNK = 1024 * 1024
_log = logging.getLogger(__name__)


class Refused(Exception):
    """A tree or record the server will not take; the message says what and where."""


@dataclass(frozen=True)
class TreeFacts:
    """What a checked checkpoint copy holds."""

    size_bytes: int
    batches: dict[str, int]
    """The last committed batch of each query, by its sub-directory (``<key>/commits``)."""


def check_tree(root: Path) -> TreeFacts:
    """``root`` checked (a real directory holding only directories and regular files) and
    measured; ``Refused`` naming the first entry that is anything else."""
    _require_directory(root, "the checkpoint copy")
    size = 0
    for directory, names, files in os.walk(root, followlinks=False, onerror=_walk_failed):
        for name in [*names, *files]:
            path = os.path.join(directory, name)
            status = os.lstat(path)
            shown = os.path.relpath(path, root)
            if stat.S_ISLNK(status.st_mode):
                raise Refused(f"{shown} is a symbolic link")
            if stat.S_ISREG(status.st_mode):
                size += status.st_size
            elif not stat.S_ISDIR(status.st_mode):
                raise Refused(f"{shown} is neither a regular file nor a directory")
    return TreeFacts(size_bytes=size, batches=batches_of(root))


def batches_of(checkpoint: Path) -> dict[str, int]:
    """The last committed batch of each query directory of ``checkpoint`` that has one."""
    batches = {}
    for entry in _entries(checkpoint):
        if not entry.is_dir(follow_symlinks=False):
            continue
        commits = Path(entry.path) / "commits"
        if commits.is_symlink() or not commits.is_dir():
            continue
        batch = last_batch(os.listdir(commits))
        if batch is not None:
            batches[entry.name] = batch
    return batches


def read_record(path: Path) -> str:
    """The text of a staged snapshot's record; ``Refused`` for a link, anything but a regular
    file, or a record larger than ``MAX_RECORD_BYTES`` (then left unread)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused(f"{path.name} is a symbolic link") from None
        raise Refused(f"{path.name} cannot be read: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as record:
        status = os.fstat(record.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise Refused(f"{path.name} is not a regular file")
        if status.st_size > MAX_RECORD_BYTES:
            raise Refused(f"{path.name} holds {status.st_size} bytes, more than {MAX_RECORD_BYTES}")
        data = record.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise Refused(f"{path.name} holds more than {MAX_RECORD_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def move_tree(source: Path, target: Path) -> None:
    """Move the directory ``source`` to ``target`` (which must not exist): one rename on one
    file system, else a copy of its directories and regular files (``Refused`` for anything
    else, with nothing left at ``target``) and the removal of ``source``."""
    _require_directory(source, source.name)
    try:
        os.rename(source, target)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    try:
        shutil.copytree(source, target, symlinks=True, copy_function=_copy_regular)
    except BaseException:
        remove_tree(target)
        raise
    remove_tree(source)


def copy_tree(source: Path, target: Path) -> None:
    """Copy the directory ``source`` (the server's own, already checked) to a new ``target``."""
    shutil.copytree(source, target, symlinks=True, copy_function=_copy_regular)


def seal(root: Path) -> None:
    """Make the tree at ``root`` the server's: owned by its user (when it runs as root), with
    no one else able to write and no set-id or executable files. Links are never followed
    (a checked tree has none)."""
    as_root = os.geteuid() == 0
    owner = (os.getuid(), os.getgid())
    paths = [str(root)]
    for directory, names, files in os.walk(root, followlinks=False, onerror=_walk_failed):
        paths += [os.path.join(directory, name) for name in [*names, *files]]
    for path in paths:
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode):
            raise Refused(f"{os.path.relpath(path, root)} is a symbolic link")
        if as_root:
            os.chown(path, *owner, follow_symlinks=False)
        mode = 0o755 if stat.S_ISDIR(status.st_mode) else 0o644
        os.chmod(path, mode)


def remove_tree(path: Path) -> None:
    """Remove the directory (or file, or link) at ``path`` if it is there; what cannot be
    removed is logged and left."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        try:
            path.unlink()
        except OSError as error:
            _log.warning("could not remove %s: %s", path, error)
        return

    def report(_function: object, failed: str, error: tuple[type, BaseException, object]) -> None:
        _log.warning("could not remove %s: %s", failed, error[1])

    shutil.rmtree(path, onerror=report)


def kept_directory(root: Path, directory: str | None) -> Path | None:
    """The directory of a snapshot recorded as ``directory`` (one name) under ``root``; None
    for none, or for anything but one plain name (never a way out of the root)."""
    if not directory or directory in {".", ".."} or "/" in directory or "\x00" in directory:
        return None
    return root / directory


def remove_kept(root: Path, directory: str | None) -> None:
    """Remove a snapshot's directory under ``root`` (``kept_directory``), if it has one."""
    path = kept_directory(root, directory)
    if path is not None:
        remove_tree(path)


def is_real_directory(path: Path) -> bool:
    """Whether ``path`` is a directory itself, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def holds_anything(path: Path) -> bool:
    """Whether the real directory ``path`` has any entry."""
    return bool(_entries(path))


def _copy_regular(source: str, target: str) -> str:
    """``shutil.copy2`` for regular files only, opened without following a link or blocking."""
    try:
        descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused(f"{source} is a symbolic link") from None
        raise
    with os.fdopen(descriptor, "rb") as reading:
        if not stat.S_ISREG(os.fstat(reading.fileno()).st_mode):
            raise Refused(f"{source} is neither a regular file nor a directory")
        with open(target, "xb") as writing:
            shutil.copyfileobj(reading, writing, _COPY_CHUNK)
    shutil.copystat(source, target, follow_symlinks=False)
    return target


def _require_directory(path: Path, what: str) -> None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        raise Refused(f"{what} is missing") from None
    if stat.S_ISLNK(status.st_mode):
        raise Refused(f"{what} is a symbolic link")
    if not stat.S_ISDIR(status.st_mode):
        raise Refused(f"{what} is not a directory")


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:
        return []


def _walk_failed(error: OSError) -> None:
    raise Refused(f"cannot look into {error.filename}: {error.strerror}")
