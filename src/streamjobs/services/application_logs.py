"""The logs of an application's driver and executors: listed by instance, read by range, followed.

The launcher that ran an attempt knows where its logs are (``Launcher.log_files``); this asks it
with the attempt's stored handle, so logs stay readable after the driver ended and after a server
restart. Ranges and tails are read without loading whole files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound
from streamjobs.domain.manifest import Deployment
from streamjobs.launch import logs
from streamjobs.launch.base import DriverHandle, Launcher
from streamjobs.services.access import require_job
from streamjobs.store import AttemptRecord
from streamjobs.store.db import Store

MAX_TAIL_LINES = 100_000


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
    ) -> dict[str, int]:
        """Each log instance of the attempt (default: the latest) and its size in bytes."""
        files = self._files(application_id, attempt, actor)[1]
        return {name: logs.size(path) for name, path in sorted(files.items())}

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
        number, path = self.path(application_id, actor=actor, instance=instance, attempt=attempt)
        size = logs.size(path)
        if tail is not None:
            if not 0 < tail <= MAX_TAIL_LINES:
                raise InvalidInput(
                    [FieldError("query.tail", f"must be between 1 and {MAX_TAIL_LINES}")]
                )
            text = "".join(line + "\n" for line in logs.tail_lines(path, tail))
            return LogPiece(instance, number, text, max(0, size - len(text.encode())), size, size)
        first = start or 0
        if first < 0 or (end is not None and end < first):
            raise InvalidInput([FieldError("query.start", "give 0 <= start <= end")])
        data = logs.read_range(path, first, end)
        return LogPiece(
            instance, number, data.decode("utf-8", "replace"), first, first + len(data), size
        )

    def path(
        self,
        application_id: str,
        *,
        actor: Actor,
        instance: str = "driver",
        attempt: int | None = None,
    ) -> tuple[int, Path]:
        """The attempt number and the file of one log instance (``actor`` must see the job)."""
        record, files = self._files(application_id, attempt, actor)
        if instance not in files:
            known = ", ".join(sorted(files)) or "none yet"
            raise NotFound("log", f"{instance} of attempt {record.number} (logs: {known})")
        return record.number, files[instance]

    def _files(
        self, application_id: str, attempt: int | None, actor: Actor
    ) -> tuple[AttemptRecord, dict[str, Path]]:
        with self._store.transaction() as repos:
            application = repos.applications.get(application_id)
            require_job(repos, actor, application.job_name, application.bundle, JobAction.VIEW)
            spec = repos.applications.spec(application_id)
            attempts = repos.applications.attempts(application_id)
        chosen = [a for a in attempts if attempt is None or a.number == attempt]
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
        )
        return record, launcher.log_files(handle)
