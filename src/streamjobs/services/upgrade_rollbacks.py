"""Rolling an upgrade back: its new application ended, the job's previous spec put back and
started again from the snapshot taken before the upgrade.

``UpgradeRollback.advance`` moves a ROLLING_BACK upgrade on. The new application is aborted
first; once it has ended, one transaction puts the previous spec back as the job's manifest (a
new job version, audited ``job.rollback``), restores the upgrade snapshot over the checkpoint
(replay allowed: the new spec may have written past it) and starts it: ROLLED_BACK. When the
previous spec cannot start again the spec is put back at least, and the upgrade FAILED says how
to start it from the snapshot.

The previous spec is the stopped application's: its resolved template, which is the manifest as
it was then with every default filled in and a pipeline's derived checkpoint location written
out. That location is left out again when the job still derives its checkpoint (so putting the
spec back does not pin where the job checkpoints); everything else is the manifest as it ran.
The job's row is written as a configure writes it (its references checked, its locations
claimed), as a new job version.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from streamjobs.domain.access import Actor
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import StaleVersion, StreamjobsError
from streamjobs.domain.spec import (
    StreamingJob,
    derived_checkpoint_location,
    parse_manifest,
    split_server_fields,
)
from streamjobs.domain.states import LIVE_STATES, AppEvent, AppState
from streamjobs.domain.upgrades import UpgradeStatus
from streamjobs.services.application_state import move
from streamjobs.services.job_references import ServerPlaces, check_references
from streamjobs.services.location_claims import claim_locations
from streamjobs.services.resources import stored_form
from streamjobs.services.snapshot_restore import OutputsAhead
from streamjobs.services.upgrade_moves import (
    REFUSALS,
    Starter,
    UpgradeMoves,
    acting_for,
    application,
)
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.jobs import JobRecord
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.upgrades import UpgradeRecord


def previous_job(
    previous_spec: dict[str, Any], current_manifest: dict[str, Any], *, checkpoint_root: str
) -> StreamingJob:
    """The job as its stopped application ran it (``previous_spec``), its checkpoint location
    left to be derived again when ``current_manifest`` derives it and it is the derived one.
    ``InvalidInput`` when the previous spec no longer passes the manifest's rules."""
    manifest, _ = split_server_fields(copy.deepcopy(previous_spec))
    job = parse_manifest(manifest, checkpoint_root=checkpoint_root)
    pipeline = job.spec.pipeline
    if pipeline is None or _sets_checkpoint(current_manifest):
        return job
    location = pipeline.streaming.checkpoint_location
    if location is not None and location == derived_checkpoint_location(job, checkpoint_root):
        pipeline.streaming.checkpoint_location = None
    return job


def put_back_previous_spec(
    repos: Repositories,
    upgrade: UpgradeRecord,
    *,
    actor: Actor,
    places: ServerPlaces,
    checkpoint_root: str,
    at: datetime,
) -> JobRecord:
    """Make the upgrade's previous spec the job's manifest again (see the module); the job as
    written. Raises what a configure would (``InvalidInput``, ``LocationTaken``, ``NotFound``)."""
    current = repos.jobs.get(upgrade.job_name)
    job = previous_job(upgrade.from_spec, current.manifest, checkpoint_root=checkpoint_root)
    record = repos.jobs.update(
        current.name,
        expected_version=current.version,
        manifest=stored_form(job),
        description=job.metadata.description,
        bundle=job.spec.bundle,
        tags=dict(job.metadata.tags),
        actor=actor.name,
        at=at,
    )
    locations = check_references(job, repos, places=places, source=None)
    claim_locations(job, locations, repos, actor=actor, checkpoint_root=checkpoint_root)
    repos.audit.append(
        at=at,
        actor=actor.name,
        action="job.rollback",
        resource_kind="job",
        resource_name=current.name,
        detail={
            "upgrade": upgrade.id,
            "version": record.version,
            "previousVersion": upgrade.from_job_version,
            "reason": upgrade.reason,
        },
        source=actor.source,
    )
    return record


class UpgradeRollback:
    """Rolls upgrades back (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        starter: Starter,
        places: ServerPlaces,
        checkpoint_root: str,
    ) -> None:
        self._store = store
        self._clock = clock
        self._starter = starter
        self._places = places
        self._checkpoint_root = checkpoint_root
        self._moves = UpgradeMoves(store=store, clock=clock)

    def advance(self, upgrade: UpgradeRecord) -> UpgradeRecord:
        """Move a ROLLING_BACK upgrade on: end its new application, then put the old one back."""
        with self._store.reading() as repos:
            new = application(repos, upgrade.to_application_id)
        if new is not None and new.state in LIVE_STATES:
            if new.state is not AppState.TERMINATING:
                self._abort(upgrade, new)
            return upgrade  # rolled back once it has ended
        try:
            moved = self._rolled_back(upgrade)
        except REFUSALS as refused:
            if isinstance(refused, StaleVersion):
                raise
            return self._failed_rollback(upgrade, refused)
        return moved or self._moves.read(upgrade.id)

    def _abort(self, upgrade: UpgradeRecord, new: ApplicationRecord) -> None:
        actor = acting_for(upgrade, what="rollback of upgrade")

        def abort() -> None:
            now = self._clock.now()
            with self._store.transaction() as repos:
                current = repos.applications.get(new.id)
                if current.state not in LIVE_STATES or current.state is AppState.TERMINATING:
                    return
                move(
                    repos,
                    current,
                    AppEvent.ABORT_REQUESTED,
                    at=now,
                    changes={"requested": "abort", "requested_at": now, "requested_by": actor.name},
                    note=("abort-requested", f"aborted to roll back upgrade {upgrade.id}"),
                )

        retried_on_contention(abort)

    def _rolled_back(self, upgrade: UpgradeRecord) -> UpgradeRecord | None:
        """Start the previous spec from the upgrade's snapshot when the outputs have not gone
        past it; when they have, on the checkpoint as the upgraded application left it, so no
        batch is written twice and no stateful query misses one."""
        try:
            return retried_on_contention(lambda: self._roll_back(upgrade, from_snapshot=True))
        except OutputsAhead as ahead:
            why = f"the outputs went on past snapshot {upgrade.snapshot_name}: " + "; ".join(
                ahead.ahead
            )
            return retried_on_contention(
                lambda: self._roll_back(upgrade, from_snapshot=False, why=why)
            )

    def _roll_back(
        self, upgrade: UpgradeRecord, *, from_snapshot: bool, why: str = ""
    ) -> UpgradeRecord | None:
        actor = acting_for(upgrade, what="rollback of upgrade")
        now = self._clock.now()
        snapshot = upgrade.snapshot_name if from_snapshot else None
        with self._store.transaction() as repos:
            repos.jobs.lock(upgrade.job_name)
            if repos.upgrades.get(upgrade.id).status is not UpgradeStatus.ROLLING_BACK:
                return None
            job = self._put_back(repos, upgrade, actor, now)
            if snapshot:
                copy = f", from a copy of snapshot {snapshot}"
            else:
                copy = f", on the checkpoint as the upgrade left it ({why})" if why else ""
            message = (
                f"started by the rollback of upgrade {upgrade.id}: the previous spec (job "
                f"version {upgrade.from_job_version}) put back as version {job.version}{copy}; "
                f"why: {upgrade.reason}"
            )
            started = self._starter.start_in(
                repos,
                upgrade.job_name,
                actor=actor,
                from_snapshot=snapshot,
                allow_replay=False,
                note=("rolled-back", message),
                detail={"upgrade": upgrade.id, "rollback": True},
            )
            return repos.upgrades.move(
                upgrade.id,
                expected=UpgradeStatus.ROLLING_BACK,
                status=UpgradeStatus.ROLLED_BACK,
                rollback_application_id=started.id,
                rollback_job_version=job.version,
                finished_at=now,
            )

    def _failed_rollback(self, upgrade: UpgradeRecord, refused: StreamjobsError) -> UpgradeRecord:
        """The previous spec could not start again: put it back at least, and say where the
        state to start it from is."""
        actor = acting_for(upgrade, what="rollback of upgrade")
        snapshot = upgrade.snapshot_name
        advice = (
            f"run the job with --from-snapshot {snapshot} --allow-replay once it can start"
            if snapshot
            else "run the job once it can start"
        )

        def put_back() -> UpgradeRecord | None:
            now = self._clock.now()
            with self._store.transaction() as repos:
                repos.jobs.lock(upgrade.job_name)
                if repos.upgrades.get(upgrade.id).status is not UpgradeStatus.ROLLING_BACK:
                    return None
                job = self._put_back(repos, upgrade, actor, now)
                reason = (
                    f"{upgrade.reason}; the rollback put the previous spec back as job version "
                    f"{job.version} but could not start it: {refused.detail}; {advice}"
                )
                return repos.upgrades.move(
                    upgrade.id,
                    expected=UpgradeStatus.ROLLING_BACK,
                    status=UpgradeStatus.FAILED,
                    rollback_job_version=job.version,
                    finished_at=now,
                    reason=reason,
                )

        try:
            return retried_on_contention(put_back) or self._moves.read(upgrade.id)
        except REFUSALS as also:
            if isinstance(also, StaleVersion):
                raise
            reason = (
                f"{upgrade.reason}; the rollback could not put the previous spec back: "
                f"{also.detail}; the job keeps the new spec"
            )
            return self._moves.end(upgrade, UpgradeStatus.FAILED, reason)

    def _put_back(
        self, repos: Repositories, upgrade: UpgradeRecord, actor: Actor, at: datetime
    ) -> JobRecord:
        return put_back_previous_spec(
            repos,
            upgrade,
            actor=actor,
            places=self._places,
            checkpoint_root=self._checkpoint_root,
            at=at,
        )


def _sets_checkpoint(manifest: dict[str, Any]) -> bool:
    pipeline = manifest.get("spec", {}).get("pipeline") or {}
    return bool((pipeline.get("streaming") or {}).get("checkpointLocation"))
