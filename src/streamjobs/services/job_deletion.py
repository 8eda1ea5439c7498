"""Deleting a job without ever leaving a live application behind it.

Applications outlive their jobs as history, but a live one (``LIVE_STATES``) without its job
would still be launched, and would keep a new job of the same name from running or being
deleted. So Delete and Run take turns on the job's row (``JobRepository.lock``): a Delete
refuses (``Conflict`` naming the application) while the job has a live application, and a Run
after a Delete finds no job.

Asked to abort first, a Delete requests the abort of the live application exactly as the abort
endpoint does (in a transaction of its own), waits until the supervisor has ended it, and then
deletes the job under the same rule, so a Run in between wins and the Delete is refused. The wait
is bounded: an application still ending after it is named in the refusal, its abort on the way.
It is asynchronous (each check a short read on a worker thread, a sleep on the event loop in
between), so waiting Deletes hold no worker thread that other requests need; and only one Delete
waits for a job at a time (another is refused, ``Conflict``), so they cannot pile up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.services.access import require_job
from streamjobs.services.applications import request_on
from streamjobs.services.resources import audit, on_fresh_reads
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention

ABORT_WAIT_SECONDS = 30.0
"""How long a Delete that aborts waits for the application to end, unless told otherwise."""
POLL_SECONDS = 0.1

Outcome = TypeVar("Outcome")


class JobDeletion:
    """Deletes jobs on behalf of an actor, aborting their live application first if asked."""

    def __init__(
        self, *, store: Store, clock: Clock, abort_wait_seconds: float = ABORT_WAIT_SECONDS
    ) -> None:
        self._store = store
        self._clock = clock
        self._abort_wait_seconds = abort_wait_seconds
        self._waiting: set[str] = set()
        """The jobs a Delete waits for; touched on the event loop only."""

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> None:
        """Delete the job; ``Conflict`` naming its live application if it has one."""
        retried_on_contention(lambda: self._delete_unless_live(name, actor, expected_version))

    async def delete_aborting(
        self, name: str, *, actor: Actor, expected_version: int | None = None
    ) -> None:
        """Abort the job's live application, wait for it to end, and delete the job; ``Conflict``
        naming the application if it is live still after the wait, and also while another
        Delete waits for this job."""
        aborted = await _on_worker(
            lambda: retried_on_contention(
                lambda: on_fresh_reads(lambda: self._abort_live(name, actor))
            )
        )
        if aborted is not None:
            if name in self._waiting:
                raise Conflict(
                    f"a delete of job {name!r} is already waiting for its application "
                    f"{aborted.name} ({aborted.id}) to end"
                )
            self._waiting.add(name)
            try:
                await self._await_end(aborted)
            finally:
                self._waiting.discard(name)
        await _on_worker(
            lambda: retried_on_contention(
                lambda: self._delete_unless_live(name, actor, expected_version, aborted=aborted)
            )
        )

    def _delete_unless_live(
        self,
        name: str,
        actor: Actor,
        expected_version: int | None,
        *,
        aborted: ApplicationRecord | None = None,
    ) -> None:
        with self._store.transaction() as repos:
            repos.jobs.lock(name)
            record = repos.jobs.get(name)
            require_job(repos, actor, name, record.bundle, JobAction.DELETE)
            live = repos.applications.live_for_job(name)
            if live is not None:
                raise Conflict(_still_live(name, live, aborted=aborted))
            repos.jobs.delete(name, expected_version=expected_version)
            audit(
                repos,
                self._clock,
                actor,
                "job.deleted",
                kind="job",
                name=name,
                detail={"version": record.version},
            )

    def _abort_live(self, name: str, actor: Actor) -> ApplicationRecord | None:
        """Request the abort of the job's live application; the application (None if the job
        has none). One that is already ending (an abort or a stop on its way) is left as it is.
        """
        with self._store.transaction() as repos:
            record = repos.jobs.get(name)
            require_job(repos, actor, name, record.bundle, JobAction.DELETE)
            live = repos.applications.live_for_job(name)
            if live is None or live.state is AppState.TERMINATING:
                return live
            require_job(repos, actor, name, record.bundle, JobAction.ABORT)
            aborted = request_on(
                repos, live, AppEvent.ABORT_REQUESTED, "abort", actor=actor, at=self._clock.now()
            )
            _audit_abort(repos, self._clock, actor, name, aborted)
            return aborted

    async def _await_end(self, application: ApplicationRecord) -> None:
        """Return once ``application`` is no longer its job's live one, or the wait is over."""
        deadline = time.monotonic() + self._abort_wait_seconds
        while not await _on_worker(lambda: self._has_ended(application)):
            if time.monotonic() >= deadline:
                return
            await anyio.sleep(POLL_SECONDS)

    def _has_ended(self, application: ApplicationRecord) -> bool:
        with self._store.reading() as repos:
            live = repos.applications.live_for_job(application.job_name)
        return live is None or live.id != application.id


async def _on_worker(call: Callable[[], Outcome]) -> Outcome:
    """``call``'s outcome, computed on a worker thread (as a plain route runs)."""
    return await anyio.to_thread.run_sync(call)


def _audit_abort(
    repos: Repositories, clock: Clock, actor: Actor, name: str, application: ApplicationRecord
) -> None:
    audit(
        repos,
        clock,
        actor,
        "application.abort",
        kind="job",
        name=name,
        detail={"application": application.id, "for": "job.delete"},
    )


def _still_live(name: str, live: ApplicationRecord, *, aborted: ApplicationRecord | None) -> str:
    """Why a job cannot be deleted: ``live``, its live application, and what to do about it."""
    subject = f"job {name!r} has a live application {live.name} ({live.id}) in state {live.state}"
    if aborted is not None and aborted.id == live.id:
        return (
            f"{subject}: its {live.requested or 'abort'} was requested but it has not ended yet; "
            "delete the job again once it has"
        )
    return f"{subject}; stop or abort it first, or delete the job with abort (?abort=true)"
