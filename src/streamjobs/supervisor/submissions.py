"""Starting an attempt's driver so that a server stopped at any step leaves one driver at most.

A submission has three steps, each a point where the server may die: the attempt is recorded
(with a fresh fencing value, in the transaction that claims the application), its driver is
started (the wrapper carries the fence and writes it beside the exit code), and the driver's pid
is recorded. An attempt recorded without a pid and not ended is therefore one whose start a
server did not see through; the next tick settles it before anything else happens to its
application: it adopts the driver found by the fence, or ends the attempt as a failed submission
when there is none. So an application never gets a second attempt while its first may be alive.

A cluster-mode driver has no pid here (it is recorded as 0): its submission id at the standalone
master is recorded with it, and the host and UI port of the worker it runs on once its launcher
finds them (``locate``), so any server follows, stops and reads it later.

A failure to start one driver, of whatever kind, is that application's failed submission: its
error goes to the application's events and ``error``, and the restart policy counts it.

Before an attempt is recorded, the jars its job needs must be resolved (``jars_ready``): the
resolution runs in the background (``jar_resolutions``) while the application waits where it
is, with an event saying so; the attempt then starts with the jar files, or fails naming the
coordinate that could not be resolved.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import InvalidInput, StreamjobsError
from streamjobs.domain.jar_requests import JarRequest, jar_request
from streamjobs.domain.spec import parse_manifest
from streamjobs.formatting import duration
from streamjobs.launch.attempt_cleanup import remove_private_files
from streamjobs.launch.base import AttemptSpec, DriverHandle, Launcher, LaunchFailed
from streamjobs.launch.cluster import DriverLocator
from streamjobs.launch.jars import JarResolution, JarResolver
from streamjobs.services.application_state import move
from streamjobs.services.resources import on_fresh_reads
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.decisions import log_event
from streamjobs.supervisor.jar_resolutions import BackgroundJarResolutions, Waiting

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingAttempt:
    """An attempt recorded, its driver not started yet."""

    number: int
    fence: str
    token: str
    hold_until: datetime | None


class Submissions:
    """Records, starts and settles attempts (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        attempts: AttemptFactory,
        clock: Clock,
        launcher_for: Callable[[ApplicationRecord], Launcher],
        jar_resolver: JarResolver | None = None,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        """Without a ``jar_resolver`` drivers resolve their packages themselves; ``wake`` ticks
        the loop again (a resolution ended)."""
        self._store = store
        self._attempts = attempts
        self._clock = clock
        self._launcher_for = launcher_for
        self._wake = wake
        self._jars = (
            BackgroundJarResolutions(jar_resolver, on_resolved=self._resolved)
            if jar_resolver is not None
            else None
        )
        self._requests: dict[str, JarRequest] = {}
        """Each application's jar request, read once from its spec."""

    def jars_ready(self, application_id: str) -> bool:
        """Whether the application's next attempt may be recorded as far as jars go: none are
        needed, or their resolution has ended (either way: a failure fails the attempt). False
        while they are resolved in the background; the first time, an event says so."""
        if self._jars is None:
            return True
        request = self._request_of(application_id)
        if request is None:
            return True
        answer = self._jars.check(application_id, request)
        if not isinstance(answer, Waiting):
            self._requests.pop(application_id, None)
            return True
        if answer.first:
            message = f"resolving {request.describe()}: {', '.join(request.coordinates)}"
            self._event(application_id, "jars-resolving", message)
        return False

    def record(
        self,
        repos: Repositories,
        application: ApplicationRecord,
        *,
        token: str,
        hold_until: datetime | None,
    ) -> PendingAttempt:
        """Record the application's next attempt in ``repos``' transaction, before its start."""
        pending = PendingAttempt(
            number=repos.applications.next_attempt_number(application.id),
            fence=secrets.token_hex(16),
            token=token,
            hold_until=hold_until,
        )
        repos.applications.add_attempt(
            application.id,
            number=pending.number,
            submitted_at=self._clock.now(),
            directory=str(self._attempts.directory_for(application, pending.number)),
            fence=pending.fence,
        )
        return pending

    def start(self, application: ApplicationRecord, pending: PendingAttempt) -> int | None:
        """Start the recorded attempt's driver and record its pid (None: it did not start, and
        the attempt is recorded as a failed submission)."""
        number = pending.number
        try:
            spec = self._with_jars(
                self._attempts.spec_for(
                    application,
                    number,
                    pending.token,
                    hold_until=pending.hold_until,
                    fence=pending.fence,
                )
            )
            handle = self._launcher_for(application).submit(spec)
        except Exception as error:
            if not isinstance(error, StreamjobsError):
                log.exception("starting attempt %d of %s failed", number, application.id)
            self._fail(application.id, number, exit_code=None, detail=_detail(error))
            remove_private_files(self._attempts.directory_for(application, number))
            return None
        with self._store.transaction() as repos:
            record_handle(repos, application.id, number, handle)
        return handle.pid

    def settle(
        self, application: ApplicationRecord, attempt: AttemptRecord
    ) -> tuple[ApplicationRecord, AttemptRecord]:
        """An attempt recorded without a pid and not ended, as the application and the attempt
        are once it has been adopted (it now has a pid) or ended."""
        found = self._launcher_for(application).recover(
            Path(attempt.directory), attempt.fence or ""
        )
        number = attempt.number
        if isinstance(found, DriverHandle):
            with self._store.transaction() as repos:
                record_handle(repos, application.id, number, found)
                repos.applications.add_event(
                    application.id,
                    at=self._clock.now(),
                    kind="driver-recovered",
                    message=f"attempt {number}: found its driver ({_found(found)}), started "
                    "by a server that stopped before recording it",
                )
        elif found.exit_code is None:
            detail = "the server stopped while starting the driver, which never ran"
            self._fail(application.id, number, exit_code=None, detail=detail)
        else:
            detail = (
                "the driver, started by a server that stopped before recording it, exited "
                f"with code {found.exit_code}"
            )
            self._fail(application.id, number, exit_code=found.exit_code, detail=detail)
        with self._store.reading() as repos:
            current = repos.applications.get(application.id)
            settled = repos.applications.latest_attempt(application.id)
        assert settled is not None
        return current, settled

    def locate(
        self, application: ApplicationRecord, attempt: AttemptRecord, handle: DriverHandle
    ) -> tuple[AttemptRecord, DriverHandle]:
        """A running driver's attempt and handle with its host and UI port recorded, once its
        launcher finds them (a cluster-mode driver's, on the worker the master chose, is known
        only once it runs: ``launch.cluster.DriverLocator``); as they were otherwise."""
        if handle.submission_id is None or (handle.ui_port and handle.driver_host):
            return attempt, handle
        launcher = self._launcher_for(application)
        if not isinstance(launcher, DriverLocator):
            return attempt, handle
        found = launcher.locate(handle)
        if (found.driver_host, found.ui_port) == (handle.driver_host, handle.ui_port):
            return attempt, handle
        with self._store.transaction() as repos:
            recorded = repos.applications.update_attempt(
                application.id,
                attempt.number,
                driver_host=found.driver_host or None,
                ui_port=found.ui_port or None,
            )
        log.info(
            "%s: attempt %d's driver %s runs on %s, its UI on port %s",
            application.id,
            attempt.number,
            handle.submission_id,
            found.driver_host,
            found.ui_port or "(not yet known)",
        )
        return recorded, found

    def _with_jars(self, spec: AttemptSpec) -> AttemptSpec:
        """``spec`` with the jar files resolved for its job; ``LaunchFailed`` naming the
        coordinate when their resolution failed. Unchanged when there is no resolution yet (the
        driver then resolves its packages itself)."""
        request = jar_request(spec.job)
        if self._jars is None or request.empty:
            return spec
        resolution = self._jars.known(request)
        if resolution is None:
            return spec
        if resolution.error is not None:
            raise LaunchFailed(f"cannot resolve the job's jars: {resolution.error}")
        return replace(spec, packaged_jars=resolution.jars)

    def _request_of(self, application_id: str) -> JarRequest | None:
        request = self._requests.get(application_id)
        if request is None:
            with self._store.reading() as repos:
                manifest = repos.applications.spec(application_id)
            try:
                request = jar_request(parse_manifest(manifest))
            except (InvalidInput, ValueError):
                return None  # the launch fails on the manifest itself, saying why
            self._requests[application_id] = request
        return request

    def _resolved(
        self, request: JarRequest, outcome: JarResolution, application_ids: list[str]
    ) -> None:
        if outcome.error is not None:
            kind, message = "jars-unresolved", f"could not resolve {request.describe()}: "
            message += outcome.error
        else:
            kind = "jars-resolved"
            message = f"resolved {request.describe()} in {duration(outcome.seconds)}"
        for application_id in application_ids:
            try:
                self._event(application_id, kind, message)
            except StreamjobsError as error:  # deleted meanwhile: the others are still told
                log.info("%s: %s", application_id, error.detail)
        self._wake()

    def _event(self, application_id: str, kind: str, message: str) -> None:
        log_event(application_id, kind, message)
        with self._store.transaction() as repos:
            repos.applications.add_event(
                application_id, at=self._clock.now(), kind=kind, message=message
            )

    def _fail(
        self, application_id: str, number: int, *, exit_code: int | None, detail: str
    ) -> None:
        """End the attempt as a failed submission: ``detail`` becomes the application's error."""
        now = self._clock.now()

        def record() -> None:
            with self._store.transaction() as repos:
                repos.applications.update_attempt(
                    application_id, number, ended_at=now, exit_code=exit_code
                )
                move(
                    repos,
                    repos.applications.get(application_id),
                    None,
                    at=now,
                    changes={"error_message": detail},
                    note=("submission-failed", f"attempt {number}: {detail}"),
                )

        on_fresh_reads(record)


def record_handle(
    repos: Repositories, application_id: str, number: int, handle: DriverHandle
) -> None:
    """Record how to find the started driver of the application's attempt ``number``."""
    repos.applications.update_attempt(
        application_id,
        number,
        pid=handle.pid,
        process_started_at=handle.started_at,
        directory=handle.directory,
        ui_port=handle.ui_port,
        master=handle.master,
        submission_id=handle.submission_id,
        driver_host=handle.driver_host or None,
        launched_on=handle.launched_on,
    )


def _found(handle: DriverHandle) -> str:
    if handle.submission_id is not None:
        return f"submission {handle.submission_id}"
    return f"pid {handle.pid}"


def _detail(error: Exception) -> str:
    if isinstance(error, StreamjobsError):
        return error.detail
    return f"the driver could not be started: {type(error).__name__}: {error}"
