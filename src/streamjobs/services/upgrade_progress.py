"""Carrying out an upgrade, one supervisor tick at a time: start the new spec once the old
application has stopped, watch it, and roll it back when it fails in its window.

``UpgradeProgress.advance`` moves one upgrade on as far as what it sees allows:

- STOPPING: once the old application is STOPPED and its upgrade snapshot READY, the job's
  current spec starts (``Starter.start_in``) on the same checkpoint (last-state), on a copy of
  the snapshot (snapshot) or on a fresh checkpoint (stateless): STARTING. The old application
  ending otherwise, or its snapshot failing, fails the upgrade; the new spec refused at its start
  rolls it back.
- STARTING and WATCHING: ``domain.upgrades.judge_watch`` on the new application.
- ROLLING_BACK: ``upgrade_rollbacks``.

Every step writes the upgrade's move and the applications' events in one transaction
(``upgrade_moves``).
"""

from __future__ import annotations

from datetime import timedelta

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import StaleVersion, StreamjobsError
from streamjobs.domain.snapshots import SnapshotStatus
from streamjobs.domain.states import LIVE_STATES, AppState
from streamjobs.domain.upgrades import (
    Judgement,
    Upgraded,
    UpgradeMode,
    UpgradeStatus,
    Verdict,
    judge_watch,
)
from streamjobs.services.job_references import ServerPlaces
from streamjobs.services.upgrade_moves import (
    REFUSALS,
    Starter,
    Step,
    UpgradeMoves,
    acting_for,
    application,
    rollback_window,
)
from streamjobs.services.upgrade_rollbacks import UpgradeRollback
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Store
from streamjobs.store.outages import retried_on_contention
from streamjobs.store.upgrades import UpgradeRecord

SNAPSHOT_GRACE = timedelta(seconds=120)
"""How long after the old application stopped its upgrade snapshot may still be handed over."""


class UpgradeProgress:
    """Moves upgrades on (see the module)."""

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
        self._moves = UpgradeMoves(store=store, clock=clock)
        self._rollback = UpgradeRollback(
            store=store,
            clock=clock,
            starter=starter,
            places=places,
            checkpoint_root=checkpoint_root,
        )

    def advance(self, upgrade_id: str) -> UpgradeRecord:
        """Move the upgrade on as far as it can go now; the upgrade afterwards."""
        upgrade = self._moves.read(upgrade_id)
        if upgrade.status is UpgradeStatus.STOPPING:
            upgrade = self._stopping(upgrade)
        if upgrade.status in (UpgradeStatus.STARTING, UpgradeStatus.WATCHING):
            upgrade = self._watching(upgrade)
        if upgrade.status is UpgradeStatus.ROLLING_BACK:
            upgrade = self._rollback.advance(upgrade)
        return upgrade

    # -- STOPPING ------------------------------------------------------------------------------

    def _stopping(self, upgrade: UpgradeRecord) -> UpgradeRecord:
        with self._store.reading() as repos:
            old = application(repos, upgrade.from_application_id)
            snapshot = (
                repos.snapshots.find(upgrade.job_name, upgrade.snapshot_name)
                if upgrade.snapshot_name
                else None
            )
        now = self._clock.now()
        if old is None:
            return self._moves.end(
                upgrade, UpgradeStatus.FAILED, "the application it upgraded is gone"
            )
        if old.state in LIVE_STATES:
            return upgrade  # still stopping
        if old.state is not AppState.STOPPED:
            reason = (
                f"{old.name} ended {old.state} instead of stopping"
                f"{': ' + old.error_message if old.error_message else ''}; nothing was started"
            )
            return self._moves.end(upgrade, UpgradeStatus.FAILED, reason, on=old.id)
        if upgrade.snapshot_name is not None:
            if snapshot is None or snapshot.status is SnapshotStatus.TAKING:
                if snapshot is None and now - old.transition_time > SNAPSHOT_GRACE:
                    reason = (
                        f"{old.name} stopped without handing over the upgrade snapshot "
                        f"{upgrade.snapshot_name}; the job is stopped on its checkpoint: run it "
                        "to start the new spec"
                    )
                    return self._moves.end(upgrade, UpgradeStatus.FAILED, reason, on=old.id)
                return upgrade  # the snapshot step collects it
            if snapshot.status is SnapshotStatus.FAILED:
                reason = (
                    f"the upgrade snapshot {snapshot.name} could not be taken ({snapshot.error}), "
                    "so there would be nothing to roll back to; the job is stopped on its "
                    "checkpoint: run it to start the new spec"
                )
                return self._moves.end(upgrade, UpgradeStatus.FAILED, reason, on=old.id)
        return self._start(upgrade, old)

    def _start(self, upgrade: UpgradeRecord, old: ApplicationRecord) -> UpgradeRecord:
        actor = acting_for(upgrade)
        snapshot = upgrade.snapshot_name if upgrade.mode is UpgradeMode.SNAPSHOT else None

        def start() -> UpgradeRecord | None:
            now = self._clock.now()
            with self._store.transaction() as repos:
                repos.jobs.lock(upgrade.job_name)
                if repos.upgrades.get(upgrade.id).status is not UpgradeStatus.STOPPING:
                    return None
                version = repos.jobs.get(upgrade.job_name).version
                message = (
                    f"started by upgrade {upgrade.id} of {old.name} ({upgrade.mode}): job "
                    f"version {upgrade.from_job_version} -> {version}"
                )
                started = self._starter.start_in(
                    repos,
                    upgrade.job_name,
                    actor=actor,
                    from_snapshot=snapshot,
                    fresh_checkpoint=upgrade.mode is UpgradeMode.STATELESS,
                    note=("upgrade-started", message),
                    detail={"upgrade": upgrade.id},
                )
                repos.applications.add_event(
                    old.id,
                    at=now,
                    kind="upgraded",
                    message=f"upgrade {upgrade.id}: job version {version} runs as {started.name}",
                )
                return repos.upgrades.move(
                    upgrade.id,
                    expected=UpgradeStatus.STOPPING,
                    status=UpgradeStatus.STARTING,
                    to_application_id=started.id,
                    to_job_version=version,
                    to_spec=repos.applications.spec(started.id),
                    started_at=now,
                )

        try:
            moved = retried_on_contention(start)
        except REFUSALS as refused:
            if isinstance(refused, StaleVersion):
                raise
            return self._refused_start(upgrade, old, refused)
        return moved or self._moves.read(upgrade.id)

    def _refused_start(
        self, upgrade: UpgradeRecord, old: ApplicationRecord, refused: StreamjobsError
    ) -> UpgradeRecord:
        """The new spec could not even start: roll back to the old one, unless rollback is off."""
        reason = f"the new spec could not start: {refused.detail}"
        if rollback_window(upgrade.to_spec) == 0:
            reason += (
                "; rollback is off (spec.upgrade.rollbackWithinSeconds: 0): the job is stopped, "
                "run it once it can start"
            )
            return self._moves.end(upgrade, UpgradeStatus.FAILED, reason, on=old.id)
        return self._moves.move(
            upgrade,
            Step(
                UpgradeStatus.ROLLING_BACK,
                {"reason": reason},
                (old.id, "upgrade-rolling-back", f"upgrade {upgrade.id}: {reason}; rolling back"),
            ),
        )

    # -- STARTING, WATCHING --------------------------------------------------------------------

    def _watching(self, upgrade: UpgradeRecord) -> UpgradeRecord:
        with self._store.reading() as repos:
            new = application(repos, upgrade.to_application_id)
            firing = (
                {
                    rule: state.firing_since
                    for rule, state in repos.health.firing(new.id).items()
                    if state.firing_since is not None
                }
                if new is not None
                else {}
            )
        if new is None:
            return self._moves.end(
                upgrade, UpgradeStatus.FAILED, "the upgraded application is gone"
            )
        watched = Upgraded(
            name=new.name,
            state=new.state,
            failures=new.submission_failures + new.execution_failures,
            firing=firing,
        )
        judgement = judge_watch(
            upgrade.status,
            watched,
            window_seconds=rollback_window(upgrade.to_spec),
            watch_until=upgrade.watch_until,
            now=self._clock.now(),
        )
        step = self._watch_step(upgrade, new, judgement)
        return upgrade if step is None else self._moves.move(upgrade, step)

    def _watch_step(
        self, upgrade: UpgradeRecord, new: ApplicationRecord, judgement: Judgement
    ) -> Step | None:
        now, reason = self._clock.now(), judgement.reason or ""
        about = f"upgrade {upgrade.id}: "
        if judgement.verdict is Verdict.WATCH:
            until = judgement.watch_until
            assert until is not None
            message = (
                f"{about}{new.name} runs; it is watched until {until:%H:%M:%S} UTC: failing or "
                "a health rule firing before then rolls the upgrade back"
            )
            return Step(
                UpgradeStatus.WATCHING,
                {"watch_until": until},
                (new.id, "upgrade-watching", message),
            )
        if judgement.verdict is Verdict.SUCCEED:
            return Step(
                UpgradeStatus.SUCCEEDED,
                {"finished_at": now, "reason": reason},
                (new.id, "upgrade-succeeded", f"{about}succeeded: {reason}"),
            )
        if judgement.verdict is Verdict.FAIL:
            return Step(
                UpgradeStatus.FAILED,
                {"finished_at": now, "reason": reason},
                (new.id, "upgrade-failed", f"{about}{reason}"),
            )
        if judgement.verdict is Verdict.ROLL_BACK:
            message = f"{about}{reason}; rolling back to the previous spec"
            return Step(
                UpgradeStatus.ROLLING_BACK,
                {"reason": reason},
                (new.id, "upgrade-rolling-back", message),
            )
        return None
