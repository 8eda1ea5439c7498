"""``STREAMJOBS_HOME`` is the server's alone: created 0700, its own files 0600, and narrowed
back, with a warning, when a server finds it wider.

The home holds the store, the secret key and the admin's token and password: anyone else who can
read it owns the server. Files the server writes there are created 0600 (``secret_box``,
``admin bootstrap``; the SQLite database here, whose ``-wal`` and ``-shm`` files SQLite creates
with the database's own mode). A home made by hand, copied, or left by an older version may be
wider, so each start narrows it:

- the home and every directory under it to 0700, and every regular file directly in it to 0600;
- but never what belongs to drivers, whose owners and modes the launcher sets for the driver's
  account: attempt directories (``apps/<application>/<attempt>/``) and what they hold, and
  ``checkpoints/`` and ``run-as/`` with everything under them.

Symbolic links are not followed. A path that cannot be narrowed (another owner) is logged and
left: the server still starts.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sqlalchemy import make_url

from streamjobs.settings import Settings

log = logging.getLogger(__name__)

PRIVATE_DIRECTORY_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
DRIVERS_DIRECTORIES = frozenset({"checkpoints", "run-as"})
"""Directories directly in the home that hold drivers' things, left as the launcher made them."""
APPS_DIRECTORY = "apps"
"""``apps/<application>/<attempt>/``: the attempt directories below are the drivers'."""


def secure_home(settings: Settings) -> list[Path]:
    """Create the home (0700) or narrow the one there, and create the SQLite database file 0600
    before SQLite does; the paths narrowed."""
    home = settings.resolved_home
    if home.is_dir():
        narrowed = narrow_home(home)
    else:
        home.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIRECTORY_MODE)
        home.chmod(PRIVATE_DIRECTORY_MODE)  # whatever the umask took away
        narrowed = []
    database = sqlite_file(settings.resolved_database_url)
    if database is not None:
        create_private_file(database)
    return narrowed


def narrow_home(home: Path) -> list[Path]:
    """Narrow ``home`` as the module says; the paths narrowed, each logged as a warning."""
    return [path for path in _home_paths(home) if _narrow(path)]


def sqlite_file(database_url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` URL; None for any other database, or one in memory."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database).expanduser()


def create_private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 unless it exists (an empty file is an empty database)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    os.close(descriptor)


def _home_paths(home: Path) -> list[Path]:
    """The home, every directory under it outside the drivers' own, and its own files."""
    paths = [home]
    for child in _children(home):
        if child.is_symlink():
            continue
        if child.is_dir():
            if child.name in DRIVERS_DIRECTORIES:
                continue
            paths += _directories(child, attempts_below=child.name == APPS_DIRECTORY)
        elif child.is_file():
            paths.append(child)
    return paths


def _directories(top: Path, *, attempts_below: bool) -> list[Path]:
    """``top`` and the directories under it; under ``apps``, not the attempt directories."""
    found = [top]
    for child in _children(top):
        if child.is_dir() and not child.is_symlink():
            if attempts_below:
                found.append(child)  # apps/<application>: its children are attempts
            else:
                found += _directories(child, attempts_below=False)
    return found


def _children(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError as error:
        log.warning("could not look into %s: %s", directory, error.strerror)
        return []


def _narrow(path: Path) -> bool:
    """Take group's and others' permissions off the directory or regular file ``path``; whether
    it was narrowed. Opened without following a link, so a path swapped for a link since it was
    listed narrows nothing else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError as error:
        log.warning("could not check the permissions of %s: %s", path, error.strerror)
        return False
    try:
        status = os.fstat(descriptor)
        mode = stat.S_IMODE(status.st_mode)
        if stat.S_ISDIR(status.st_mode):
            wanted = PRIVATE_DIRECTORY_MODE
        elif stat.S_ISREG(status.st_mode):
            wanted = PRIVATE_FILE_MODE
        else:
            return False
        if not mode & 0o077:
            return False
        os.fchmod(descriptor, wanted)
    except OSError as error:
        log.warning("%s could not be narrowed: %s", path, error.strerror)
        return False
    finally:
        os.close(descriptor)
    log.warning("%s was %04o, now %04o: only the server may read it", path, mode, wanted)
    return True
