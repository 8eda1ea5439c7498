"""The loop's side of standby drivers: watching them, and starting, promoting and ending them.

A standby is recorded as the application's next attempt (``standby`` set), in the store before
its driver starts and with a fencing value, like any attempt (``supervisor.submissions``), so a
restarted server re-attaches to it, or ends it when its driver never ran. Until promoted it is
not the application's latest attempt: the tick sees it apart (``reconcile.Observed.standby``)
and decides (``supervisor.standby_ticks``); this class carries those decisions out:

- ``observe`` polls the standby's driver: it records when the driver says it is held ready
  (``running_at``) and when it ended (a standby that died is history; the tick starts another).
- ``launch`` starts one with a report token of its own, kept (as a digest) with its attempt.
- ``claim`` (in the transaction that moves the application to STARTING) makes it the latest
  attempt and its token the application's; ``release`` then lets its runner start the queries.
- ``discard`` kills it and records its end; ``sweep`` does so for the standbys of applications
  that left the active states (failed, suspended, stopped) since the last tick.

A standby started on another server's host cannot be polled or signalled from here: it is
recorded as ended and a new one is started on this host (the other host's runner is asked to
stop through its stop file, when that host shares the attempt directories).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict, StreamjobsError
from streamjobs.domain.states import ACTIVE_STATES, AppState
from streamjobs.launch.attempt_cleanup import remove_private_files
from streamjobs.launch.base import DriverHandle, DriverState, Launcher
from streamjobs.services.identity import token_digest
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.supervisor.attempt_facts import handle_of
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.decisions import log_event
from streamjobs.supervisor.remote_drivers import launched_elsewhere
from streamjobs.supervisor.submissions import record_handle
from streamjobs.supervisor.tick_model import StandbyView

log = logging.getLogger(__name__)

_INACTIVE_STATES = frozenset(AppState) - ACTIVE_STATES


class StandbyGone(Conflict):
    """The standby to promote ended meanwhile: the next tick submits a new driver instead."""


class Standbys:
    """Watches, starts, promotes and ends standby drivers (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        attempts: AttemptFactory,
        clock: Clock,
        launcher_for: Callable[[ApplicationRecord], Launcher],
        host: str,
    ) -> None:
        self._store = store
        self._attempts = attempts
        self._clock = clock
        self._launcher_for = launcher_for
        self._host = host

    def held(self) -> dict[str, AttemptRecord]:
        """The newest standby not promoted of each active application that has had one."""
        with self._store.reading() as repos:
            return repos.applications.standby_attempts_in(ACTIVE_STATES)

    def observe(self, application: ApplicationRecord, standby: AttemptRecord) -> StandbyView:
        """The standby as the tick sees it, its readiness or end recorded when first seen."""
        if standby.ended_at is None and standby.pid is None:
            standby = self._settle(application, standby)
        if standby.ended_at is not None or standby.pid is None:
            return _view(standby, live=False)
        handle = handle_of(standby)
        if launched_elsewhere(handle, self._host):
            why = f"started on {handle.launched_on}, where this server cannot watch it"
            return _view(self._end(application, standby, None, why, handle), live=False)
        launcher = self._launcher_for(application)
        health = launcher.poll(handle)
        if health.state is DriverState.EXITED:
            code = "an unknown code" if health.exit_code is None else f"code {health.exit_code}"
            ended = self._end(application, standby, health.exit_code, f"exited with {code}")
            return _view(ended, live=False)
        if standby.running_at is None and launcher.standby_ready(handle):
            standby = self._ready(application, standby)
        return _view(standby, live=True)

    def launch(self, application: ApplicationRecord) -> int | None:
        """Start a standby for ``application``; its pid (None: it could not be started, which
        is recorded as its end and told in the application's events)."""
        token = secrets.token_urlsafe(32)
        fence = secrets.token_hex(16)
        with self._store.transaction() as repos:
            number = repos.applications.next_attempt_number(application.id)
            directory = self._attempts.directory_for(application, number)
            repos.applications.add_attempt(
                application.id,
                number=number,
                submitted_at=self._clock.now(),
                directory=str(directory),
                fence=fence,
                standby=True,
                token_hash=token_digest(token),
            )
        try:
            spec = self._attempts.spec_for(application, number, token, fence=fence, standby=True)
            handle = self._launcher_for(application).submit(spec)
        except Exception as error:
            if not isinstance(error, StreamjobsError):
                log.exception("starting the standby of %s failed", application.id)
            detail = error.detail if isinstance(error, StreamjobsError) else repr(error)
            self._record_end(application.id, number, None, f"could not be started: {detail}")
            remove_private_files(directory)
            return None
        with self._store.transaction() as repos:
            record_handle(repos, application.id, number, handle)
        self._event(
            application.id,
            "standby-started",
            f"attempt {number}: a standby driver "
            f"is starting (pid {handle.pid}); it is held ready until promoted",
        )
        return handle.pid

    def claim(self, repos: Repositories, application_id: str, at: datetime) -> AttemptRecord:
        """In ``repos``' transaction: make the application's standby its latest attempt, as it
        is after; ``StandbyGone`` when it ended meanwhile."""
        standby = repos.applications.standby_attempt(application_id)
        if standby is None or standby.ended_at is not None or standby.pid is None:
            raise StandbyGone(f"application {application_id}'s standby driver ended meanwhile")
        return repos.applications.update_attempt(application_id, standby.number, promoted_at=at)

    def release(
        self, application: ApplicationRecord, promoted: AttemptRecord, start_at: datetime
    ) -> None:
        """Tell the promoted standby's runner to start its queries at ``start_at``."""
        self._launcher_for(application).promote(handle_of(promoted), start_at=start_at)

    def discard(self, application: ApplicationRecord, standby: AttemptRecord, why: str) -> None:
        """Kill the standby's driver and record its end."""
        if standby.ended_at is not None:
            return
        handle = handle_of(standby) if standby.pid is not None else None
        if handle is not None and not launched_elsewhere(handle, self._host):
            self._launcher_for(application).kill(handle)
        self._end(application, standby, None, why, handle)

    def sweep(self) -> None:
        """Discard the standbys of applications no longer active (the tick does not see them)."""
        with self._store.reading() as repos:
            found = repos.applications.standby_attempts_in(_INACTIVE_STATES)
            stale = [
                (repos.applications.get(application_id), standby)
                for application_id, standby in found.items()
                if standby.ended_at is None
            ]
        for application, standby in stale:
            self.discard(application, standby, f"ended: the application is {application.state}")

    def _settle(self, application: ApplicationRecord, standby: AttemptRecord) -> AttemptRecord:
        """A standby recorded without a pid: adopt its driver, found by its fence, or end it."""
        found = self._launcher_for(application).recover(
            Path(standby.directory), standby.fence or ""
        )
        if isinstance(found, DriverHandle):
            with self._store.transaction() as repos:
                record_handle(repos, application.id, standby.number, found)
                return repos.applications.update_attempt(application.id, standby.number)
        why = "never ran: the server stopped while starting it"
        return self._end(application, standby, found.exit_code, why)

    def _ready(self, application: ApplicationRecord, standby: AttemptRecord) -> AttemptRecord:
        now = self._clock.now()
        with self._store.transaction() as repos:
            ready = repos.applications.update_attempt(
                application.id, standby.number, running_at=now
            )
        seconds = (now - standby.submitted_at).total_seconds()
        message = f"attempt {standby.number}: the standby driver is held ready ({seconds:.1f} s)"
        self._event(application.id, "standby-ready", message)
        return ready

    def _end(
        self,
        application: ApplicationRecord,
        standby: AttemptRecord,
        exit_code: int | None,
        why: str,
        handle: DriverHandle | None = None,
    ) -> AttemptRecord:
        if handle is not None and launched_elsewhere(handle, self._host):
            self._launcher_for(application).stop(handle)
        ended = self._record_end(application.id, standby.number, exit_code, why)
        remove_private_files(Path(standby.directory))
        return ended

    def _record_end(
        self, application_id: str, number: int, exit_code: int | None, why: str
    ) -> AttemptRecord:
        now = self._clock.now()
        with self._store.transaction() as repos:
            ended = repos.applications.update_attempt(
                application_id, number, ended_at=now, exit_code=exit_code, outcome="standby-ended"
            )
            message = f"attempt {number}: the standby driver {why}"
            repos.applications.add_event(
                application_id, at=now, kind="standby-ended", message=message
            )
        log_event(application_id, "standby-ended", message)
        return ended

    def _event(self, application_id: str, kind: str, message: str) -> None:
        log_event(application_id, kind, message)
        with self._store.transaction() as repos:
            repos.applications.add_event(
                application_id, at=self._clock.now(), kind=kind, message=message
            )


def _view(standby: AttemptRecord, *, live: bool) -> StandbyView:
    return StandbyView(
        attempt=standby.number,
        live=live,
        ready=standby.running_at is not None,
        ended_at=standby.ended_at,
    )
