"""The logs of an application's driver and executors: listed by instance, read by range, followed.

The launcher that ran an attempt knows where its logs are (``Launcher.log_files``, or
``worker_logs.LogSources`` for logs on a standalone cluster's workers, read over HTTP); this asks
it with the attempt's stored handle, so logs stay readable after the driver ended and after a
server restart. Ranges and tails are read without loading whole files; a log on a worker that
does not answer is a ``LogUnavailable`` that says so, not a server error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound, StreamjobsError
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.base import DriverHandle, Launcher
from streamjobs.launch.driver_addresses import LOOPBACK_DRIVER
from streamjobs.launch.worker_logs import LocalLog, LogSource, LogSources
from streamjobs.services.access import require_job
from streamjobs.store import AttemptRecord
from streamjobs.store.db import Store

MAX_TAIL_LINES = 100_000
LOOPBACK = LOOPBACK_DRIVER.host


@dataclass(frozen=True)
class LogPiece:
    """Part of one log file: its text, where it came from, and how big the file is now."""

    instance: str
    attempt: int
    text: str
    start: int
    end: int
    size: int


class ApplicationLogs:
    """Reads the logs of applications' attempts."""

    def __init__(self, *, store: Store, launchers: Mapping[Deployment, Launcher]) -> None:
        self._store = store
        self._launchers = launchers

    def instances(
        self, application_id: str, *, actor: Actor, attempt: int | None = None
    ) -> dict[str, int | None]:
        """Each log instance of the attempt (default: the latest) and its size in bytes (None:
        it is on a worker that does not answer now)."""
        sources = self._sources(application_id, attempt, actor)[1]
        return {name: _size(source) for name, source in sorted(sources.items())}

    def read(
        self,
        application_id: str,
        *,
        actor: Actor,
        instance: str = "driver",
        attempt: int | None = None,
        tail: int | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> LogPiece:
        """The last ``tail`` lines, or bytes ``start``..``end`` (default the whole file)."""
        if tail is not None and not 0 < tail <= MAX_TAIL_LINES:
            message = f"must be between 1 and {MAX_TAIL_LINES}"
            raise InvalidInput([FieldError("query.tail", message)])
        first = start or 0
        if first < 0 or (end is not None and end < first):
            raise InvalidInput([FieldError("query.start", "give 0 <= start <= end")])
        number, source = self.source(
            application_id, actor=actor, instance=instance, attempt=attempt
        )
        size = source.size()
        if tail is not None:
            text = "".join(line + "\n" for line in source.tail_lines(tail))
            return LogPiece(instance, number, text, max(0, size - len(text.encode())), size, size)
        data = source.read_range(first, end)
        return LogPiece(
            instance, number, data.decode("utf-8", "replace"), first, first + len(data), size
        )

    def source(
        self,
        application_id: str,
        *,
        actor: Actor,
        instance: str = "driver",
        attempt: int | None = None,
    ) -> tuple[int, LogSource]:
        """The attempt number and where to read one log instance (``actor`` must see the job)."""
        record, sources = self._sources(application_id, attempt, actor)
        if instance not in sources:
            known = ", ".join(sorted(sources)) or "none yet"
            raise NotFound("log", f"{instance} of attempt {record.number} (logs: {known})")
        return record.number, sources[instance]

    def path(
        self,
        application_id: str,
        *,
        actor: Actor,
        instance: str = "driver",
        attempt: int | None = None,
    ) -> tuple[int, Path | Iterator[bytes]]:
        """The attempt number and the file of one log instance (``actor`` must see the job); a
        log that is not a file on this machine comes as its bytes, in pieces."""
        number, source = self.source(
            application_id, actor=actor, instance=instance, attempt=attempt
        )
        if isinstance(source, LocalLog):
            return number, source.path
        pieces = source.chunks()
        first = next(pieces, b"")  # a worker that does not answer fails here, not mid-answer
        return number, itertools.chain([first], pieces)

    def _sources(
        self, application_id: str, attempt: int | None, actor: Actor
    ) -> tuple[AttemptRecord, dict[str, LogSource]]:
        with self._store.transaction() as repos:
            application = repos.applications.get(application_id)
            require_job(repos, actor, application.job_name, application.bundle, JobAction.VIEW)
            spec = repos.applications.spec(application_id)
            attempts = repos.applications.attempts(application_id)
        chosen = [a for a in attempts if a.number == attempt or (attempt is None and not a.held)]
        if not chosen:
            what = f"attempt {attempt} of {application_id}" if attempt else application_id
            raise NotFound("application attempt", what)
        record = chosen[-1]
        deployment = Deployment(spec["spec"]["instance"]["deployment"])
        launcher = self._launchers.get(deployment)
        if launcher is None:
            return record, {}
        handle = DriverHandle(
            pid=record.pid or 0,
            started_at=record.process_started_at or 0.0,
            directory=record.directory,
            ui_port=record.ui_port or 0,
            master=record.master or "",
            driver_host=record.driver_host or ("" if record.submission_id else LOOPBACK),
            submission_id=record.submission_id,
            launched_on=record.launched_on,
        )
        if isinstance(launcher, LogSources):
            return record, launcher.log_sources(handle)
        return record, {name: LocalLog(path) for name, path in launcher.log_files(handle).items()}


def _size(source: LogSource) -> int | None:
    """The log's size; None when it cannot be read now (its worker does not answer)."""
    try:
        return source.size()
    except StreamjobsError:
        return None
