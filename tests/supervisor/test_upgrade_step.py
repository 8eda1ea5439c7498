"""Upgrades carried out by a ticked supervisor over the fake launcher: the running application
stopped with an upgrade snapshot, the new spec started on the same checkpoint, from a copy of the
snapshot or on a fresh one, watched until it succeeds; the refusals before anything is stopped;
and the step itself. Rollbacks are ``test_upgrade_rollbacks``'s."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from streamjobs.domain.compatibility import Incompatibility
from streamjobs.domain.errors import Conflict, FieldConflict
from streamjobs.domain.snapshots import SnapshotKind, SnapshotStatus
from streamjobs.domain.states import AppState
from streamjobs.domain.upgrades import UpgradeMode, UpgradeStatus
from streamjobs.supervisor.upgrades import UpgradeStep
from tests.factories import pipeline_manifest, python_manifest
from tests.supervisor.conftest import ALICE
from tests.supervisor.snapshot_staging import checkpoint_of, stage_snapshot
from tests.supervisor.upgrade_world import (
    FILTERED,
    SQL,
    Upgrading,
    brought_up,
    commits,
    configure,
    keep_running,
    running,
    stopped_with_snapshot,
    upgrading,
)

__all__ = ["upgrading"]

pytestmark = pytest.mark.snapshots


def test_a_last_state_upgrade_starts_the_new_spec_on_the_checkpoint_and_succeeds_after_the_window(
    upgrading: Upgrading,
) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade()
    assert (upgrade.status, upgrade.mode) == (UpgradeStatus.STOPPING, UpgradeMode.LAST_STATE)
    assert (upgrade.from_job_version, upgrade.to_job_version) == (1, 2)
    assert up.check.asked == [up.job]
    assert world.app(old).state is AppState.TERMINATING
    assert "upgrade-requested" in up.events(old)

    stopped_with_snapshot(up, upgrade)
    started = up.current(upgrade)
    assert started.status is UpgradeStatus.STARTING
    assert world.app(old).state is AppState.STOPPED
    snapshot = world.services.snapshots.get(up.job, upgrade.snapshot_name or "", actor=ALICE)
    assert (snapshot.kind, snapshot.status) == (SnapshotKind.UPGRADE, SnapshotStatus.READY)
    new = world.app(started.to_application_id or "")
    assert (new.state, new.job_version) == (AppState.STARTING, 2)
    assert "started by upgrade" in up.events(new.id)["upgrade-started"]
    assert commits(checkpoint_of(world, new.id)) == [0, 1, 2, 3]  # the same checkpoint

    brought_up(up, new.id)
    watching = up.current(upgrade)
    assert watching.status is UpgradeStatus.WATCHING
    assert watching.watch_until is not None
    keep_running(up, new.id, 299)
    assert up.current(upgrade).status is UpgradeStatus.WATCHING
    keep_running(up, new.id, 2)
    succeeded = up.current(upgrade)
    assert succeeded.status is UpgradeStatus.SUCCEEDED
    assert "without failing" in (succeeded.reason or "")
    assert "upgrade-succeeded" in up.events(new.id)
    assert up.manifest()["spec"]["pipeline"]["steps"][0]["sequence"][0]["sql"] == FILTERED


def test_an_incompatible_spec_is_refused_and_nothing_is_stopped(upgrading: Upgrading) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    configure(up, (SQL, FILTERED))
    up.check.refusals = [
        Incompatibility("spec.pipeline.outputs[0]", "stateful-operators", "operator 0 changed")
    ]
    with pytest.raises(FieldConflict, match="operator 0 changed") as refused:
        up.upgrade(UpgradeMode.SNAPSHOT)
    assert [error.path for error in refused.value.errors] == ["spec.pipeline.outputs[0]"]
    world.tick()
    assert world.app(old).state is AppState.RUNNING
    assert world.launcher.drivers[-1].running
    assert up.upgrades.list(up.job, actor=ALICE) == []


def test_a_stateless_upgrade_sets_the_checkpoint_aside_and_starts_on_a_fresh_one(
    upgrading: Upgrading,
) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade(UpgradeMode.STATELESS)
    assert up.check.asked == []  # nothing to check: no state goes on
    stopped_with_snapshot(up, upgrade)
    started = up.current(upgrade)
    assert started.status is UpgradeStatus.STARTING
    checkpoint = checkpoint_of(world, old)
    assert not checkpoint.exists()
    kinds = {each.kind: each for each in world.services.snapshots.list(up.job, actor=ALICE)}
    assert kinds[SnapshotKind.REPLACED].batches == {"evens": 3}
    assert kinds[SnapshotKind.UPGRADE].batches == {"evens": 3}
    message = up.events(started.to_application_id)["started-fresh"]
    assert kinds[SnapshotKind.REPLACED].name in message


def test_a_snapshot_upgrade_starts_from_a_copy_of_the_upgrade_snapshot(
    upgrading: Upgrading,
) -> None:
    up = upgrading
    running(up)
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade(UpgradeMode.SNAPSHOT)
    stopped_with_snapshot(up, upgrade)
    started = up.current(upgrade)
    assert started.status is UpgradeStatus.STARTING
    message = up.events(started.to_application_id)["started-from-snapshot"]
    assert f"snapshot {upgrade.snapshot_name} (upgrade" in message


def test_an_upgrade_snapshot_that_failed_fails_the_upgrade_and_starts_nothing(
    upgrading: Upgrading,
) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade()
    world.tick()
    stage_snapshot(
        world,
        old,
        upgrade.snapshot_name or "",
        SnapshotKind.UPGRADE,
        batches={},
        error="the disk is full",
    )
    world.tick()
    failed = up.current(upgrade)
    assert failed.status is UpgradeStatus.FAILED
    assert "the disk is full" in (failed.reason or "")
    assert failed.to_application_id is None
    assert "upgrade-failed" in up.events(old)
    assert len(world.launcher.drivers) == 1


@pytest.mark.parametrize(
    ("setup", "refusal"),
    [
        ("never-run", "has no running application"),
        ("unchanged", "its current version"),
        ("in-progress", "has an upgrade in progress"),
    ],
)
def test_nothing_to_upgrade_is_a_conflict(upgrading: Upgrading, setup: str, refusal: str) -> None:
    up = upgrading
    if setup == "never-run":
        up.world.services.jobs.apply(up.job, pipeline_manifest(up.job), actor=ALICE)
    else:
        running(up)
    if setup == "in-progress":
        configure(up, (SQL, FILTERED))
        up.upgrade()
        configure(up, (SQL, "SELECT * FROM ticks WHERE value > 1"))
    with pytest.raises(Conflict, match=refusal):
        up.upgrade()


def test_a_program_is_upgraded_in_last_state_mode_only(upgrading: Upgrading) -> None:
    up, world = upgrading, upgrading.world
    world.services.jobs.apply(up.job, python_manifest(up.job), actor=ALICE)
    application = world.services.applications.run(up.job, actor=ALICE)
    brought_up(up, application.id)
    configure(up, ("spec.application.arguments", ["--fast"]))
    with pytest.raises(Conflict, match="takes no snapshots"):
        up.upgrade(UpgradeMode.SNAPSHOT)
    with pytest.raises(Conflict, match="python or jvm program"):
        up.upgrade(UpgradeMode.STATELESS)
    upgrade = up.upgrade()
    assert upgrade.snapshot_name is None
    world.tick()
    assert world.launcher.drivers[-1].stop_snapshot is None
    world.tick()
    started = up.current(upgrade)
    assert started.status is UpgradeStatus.STARTING
    new = world.services.applications.template(started.to_application_id or "", actor=ALICE)
    assert new["spec"]["application"]["arguments"] == ["--fast"]


@dataclass
class RecordingUpgrades:
    ids: list[str]
    broken: set[str] = field(default_factory=set)
    advanced: list[str] = field(default_factory=list)
    unreadable: bool = False

    def active(self) -> list[str]:
        if self.unreadable:
            raise OSError("the store is away")
        return list(self.ids)

    def advance(self, upgrade_id: str) -> object:
        self.advanced.append(upgrade_id)
        if upgrade_id in self.broken:
            raise RuntimeError("the store is away")
        return None


def test_one_upgrade_that_cannot_be_moved_on_does_not_hold_up_the_others() -> None:
    upgrades = RecordingUpgrades(ids=["upg-a", "upg-b"], broken={"upg-a"})
    UpgradeStep(upgrades=upgrades).run()
    assert upgrades.advanced == ["upg-a", "upg-b"]
    unreadable = RecordingUpgrades(ids=["upg-a"], unreadable=True)
    UpgradeStep(upgrades=unreadable).run()
    assert unreadable.advanced == []
