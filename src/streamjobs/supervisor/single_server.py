"""SQLite stays single-server: one supervisor per SQLite store, held by an OS file lock.

Servers on one PostgreSQL store choose their supervisor by the lease (``store.leases``); a SQLite
store is a file on one machine, and its writers already queue for one lock, so there the choice
is simpler and stricter: the server that runs the supervisor holds an exclusive ``flock`` on a
file next to the database (``<database>.supervisor.lock``), and writes its pid and URL into it.
A second server on the same store cannot get the lock and refuses to start its supervisor,
saying which server holds it. The kernel releases the lock when its process ends however it
ends, so a server restarted right after a crash takes it at once. The descriptor is not
inherited by the drivers the server starts (Python's descriptors are close-on-exec), so a
driver that outlives its server does not keep the lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from streamjobs.domain.errors import StreamjobsError

LOCK_SUFFIX = ".supervisor.lock"


class SupervisorRefused(StreamjobsError):
    """This server may not run a supervisor: another server runs the one of this store."""

    title = "Supervisor refused"


class SupervisorFileLock:
    """The exclusive lock on a SQLite store's supervisor; ``describe`` is what this server
    writes into the file for a refused one to read (its pid and URL)."""

    def __init__(self, database: Path, *, describe: str) -> None:
        self.database = database
        self.path = database.with_name(database.name + LOCK_SUFFIX)
        self._describe = describe
        self._descriptor: int | None = None

    @property
    def held(self) -> bool:
        return self._descriptor is not None

    def take(self) -> None:
        """Hold the lock from now until ``release`` (or the end of this process); a no-op when
        held already. ``SupervisorRefused`` when another server holds it."""
        if self._descriptor is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(descriptor)
            os.close(descriptor)
            raise SupervisorRefused(
                f"another server ({holder or 'its pid and URL unknown'}) runs the supervisor of "
                f"the SQLite store {self.database}: SQLite is single-server. Use PostgreSQL "
                "(STREAMJOBS_DATABASE_URL=postgresql://…) to run several servers on one store, "
                "or start this one without a supervisor (STREAMJOBS_SUPERVISOR=false)"
            ) from None
        except BaseException:
            os.close(descriptor)
            raise
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{self._describe}\n".encode(), 0)
        self._descriptor = descriptor

    def release(self) -> None:
        """Let go of the lock (a no-op when not held)."""
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is not None:
            os.ftruncate(descriptor, 0)
            os.close(descriptor)  # closing the last descriptor releases the flock


def _read(descriptor: int) -> str:
    return os.pread(descriptor, 1024, 0).decode(errors="replace").strip()
