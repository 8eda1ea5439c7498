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

A pipeline's checkpoint stays unless the Delete asks for it to go (``delete_checkpoint``), and
the outcome says where it stays: a job created under the same name would resume from it. Asked,
the checkpoint goes with the job under the same lock, so no application can be running from it
(``checkpoint_state.CheckpointRemoval`` says which directories may go: none that is or holds
any bundle's data root or any place a job claims, its own outputs and inputs included). A
checkpoint that cannot be put back after a failed Delete is logged where it lies, and the
Delete fails with its own error.

A job's snapshots go with it: their rows in the Delete's transaction, their directories under
the snapshot root once it has committed (as the checkpoint's removal). So do its upgrades.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict
from streamjobs.domain.location_claims import Claim, ClaimKind, claim_uri
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.services.access import grants_for, require_job
from streamjobs.services.applications import request_on
from streamjobs.services.checkpoint_state import (
    CheckpointRemoval,
    KeptPlace,
    existing_checkpoint,
)
from streamjobs.services.location_claims import claim_description, claims_within
from streamjobs.services.resources import audit, on_fresh_reads
from streamjobs.services.snapshot_files import remove_kept
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.outages import retried_on_contention

ABORT_WAIT_SECONDS = 30.0
"""How long a Delete that aborts waits for the application to end, unless told otherwise."""
POLL_SECONDS = 0.1

Outcome = TypeVar("Outcome")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeletedJob:
    """What became of a deleted job's checkpoint (URIs; None for neither when it had none)."""

    name: str
    kept_checkpoint: str | None = None
    """Where its checkpoint stays, when there is one and the Delete did not ask for it."""
    deleted_checkpoint: str | None = None
    """Where its checkpoint was, when the Delete removed it."""


class JobDeletion:
    """Deletes jobs on behalf of an actor, aborting their live application first if asked."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        checkpoint_root: str,
        protected_roots: Sequence[str],
        abort_wait_seconds: float = ABORT_WAIT_SECONDS,
        snapshot_root: Path | None = None,
    ) -> None:
        """``snapshot_root``: where the jobs' snapshots are kept (None: the rows of a deleted
        job's snapshots go, and their directories, if any, are left)."""
        self._store = store
        self._snapshot_root = snapshot_root
        self._clock = clock
        self._checkpoint_root = checkpoint_root
        self._protected_roots = tuple(protected_roots)
        self._abort_wait_seconds = abort_wait_seconds
        self._waiting: set[str] = set()
        """The jobs a Delete waits for; touched on the event loop only."""

    def delete(
        self,
        name: str,
        *,
        actor: Actor,
        expected_version: int | None = None,
        delete_checkpoint: bool = False,
    ) -> DeletedJob:
        """Delete the job (and its checkpoint, if asked); ``Conflict`` naming its live
        application if it has one."""
        return retried_on_contention(
            lambda: self._delete_unless_live(
                name, actor, expected_version, delete_checkpoint=delete_checkpoint
            )
        )

    async def delete_aborting(
        self,
        name: str,
        *,
        actor: Actor,
        expected_version: int | None = None,
        delete_checkpoint: bool = False,
    ) -> DeletedJob:
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
        return await _on_worker(
            lambda: retried_on_contention(
                lambda: self._delete_unless_live(
                    name,
                    actor,
                    expected_version,
                    delete_checkpoint=delete_checkpoint,
                    aborted=aborted,
                )
            )
        )

    def _delete_unless_live(
        self,
        name: str,
        actor: Actor,
        expected_version: int | None,
        *,
        delete_checkpoint: bool,
        aborted: ApplicationRecord | None = None,
    ) -> DeletedJob:
        removal: CheckpointRemoval | None = None
        snapshots: list[str] = []
        try:
            with self._store.transaction() as repos:
                repos.jobs.lock(name)
                record = repos.jobs.get(name)
                require_job(repos, actor, name, record.bundle, JobAction.DELETE)
                live = repos.applications.live_for_job(name)
                if live is not None:
                    raise Conflict(_still_live(name, live, aborted=aborted))
                claims = repos.claims.of_job(name)
                kept = (
                    None
                    if delete_checkpoint
                    else existing_checkpoint(claims, self._checkpoint_root)
                )
                if delete_checkpoint:
                    removal = self._removal(repos, actor, name, record.bundle, claims)
                if removal is not None:
                    removal.set_aside()
                repos.jobs.delete(name, expected_version=expected_version)
                deleted_snapshots = repos.snapshots.delete_of_job(name)
                repos.upgrades.delete_of_job(name)
                snapshots = [each.directory for each in deleted_snapshots if each.directory]
                detail: dict[str, object] = {"version": record.version}
                if removal is not None:
                    detail["deletedCheckpoint"] = removal.uri
                if deleted_snapshots:
                    detail["deletedSnapshots"] = [each.name for each in deleted_snapshots]
                audit(
                    repos, self._clock, actor, "job.deleted", kind="job", name=name, detail=detail
                )
        except BaseException:
            if removal is not None:
                _put_back(removal)
            raise
        deleted = removal.uri if removal is not None and removal.finish() else None
        self._remove_snapshots(name, snapshots)
        return DeletedJob(name, kept_checkpoint=kept, deleted_checkpoint=deleted)

    def _remove_snapshots(self, name: str, directories: Sequence[str]) -> None:
        """Remove the directories of a deleted job's snapshots, once its deletion committed."""
        if self._snapshot_root is None:
            if directories:
                _log.warning(
                    "job %r was deleted with %d snapshots, but this server has no snapshot "
                    "root to remove their directories from",
                    name,
                    len(directories),
                )
            return
        for directory in directories:
            remove_kept(self._snapshot_root, directory)

    def _removal(
        self, repos: Repositories, actor: Actor, name: str, bundle: str, claims: Sequence[Claim]
    ) -> CheckpointRemoval | None:
        """How the job's checkpoint is to go (None when it has none); ``Conflict`` when it is
        not a directory that may be deleted."""
        checkpoint = next((claim for claim in claims if claim.kind is ClaimKind.CHECKPOINT), None)
        if checkpoint is None:
            return None
        removal = CheckpointRemoval(
            checkpoint,
            checkpoint_root=self._checkpoint_root,
            data_roots=repos.bundles.get(bundle).data_roots or (),
            protected_roots=self._protected_roots,
        )
        repos.claims.lock()
        removal.refuse_holding(self._kept_places(repos, actor, name, bundle, removal))
        return removal

    def _kept_places(
        self, repos: Repositories, actor: Actor, name: str, bundle: str, removal: CheckpointRemoval
    ) -> list[KeptPlace]:
        """Every bundle's data roots, and every claim but the job's checkpoint at or below it."""
        kept = [
            KeptPlace(root, f"the data root {root} of {_bundle(other.name, bundle)}")
            for other in repos.bundles.list()
            for root in other.data_roots or ()
        ]
        grants = grants_for(repos, actor)
        for uri in dict.fromkeys((removal.uri, removal.resolved_uri)):
            holders = claims_within(
                repos, uri, job=name, bundle=bundle, checkpoint_root=self._checkpoint_root
            )
            kept += [
                KeptPlace(
                    claim_uri(holder.claim, self._checkpoint_root),
                    claim_description(holder, actor, grants, self._checkpoint_root),
                )
                for holder in holders
            ]
        return kept

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


def _put_back(removal: CheckpointRemoval) -> None:
    """Undo ``removal`` after a failed Delete; a failure to is logged, so that the Delete's own
    error is what its caller sees."""
    aside = removal.aside
    try:
        removal.undo()
    except Exception:
        _log.exception(
            "could not put the checkpoint %s back after a failed delete; it lies at %s",
            removal.uri,
            aside,
        )


def _bundle(name: str, own: str) -> str:
    """A bundle as a refusal names it: by name if it is the job's, else not (it may be hidden)."""
    return f"bundle {name!r}" if name == own else "another bundle"


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
