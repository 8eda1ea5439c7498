"""Upgrades rolled back by a ticked supervisor over the fake launcher: the upgraded application
failing or a health rule of it firing within ``spec.upgrade.rollbackWithinSeconds``, or the new
spec refused at its start, puts the previous spec back and restores the upgrade snapshot; with the
window at 0 nothing is rolled back."""

from __future__ import annotations

import pytest

from streamjobs.domain.health import RuleState
from streamjobs.domain.snapshots import SnapshotKind
from streamjobs.domain.states import AppState
from streamjobs.domain.upgrades import UpgradeStatus
from tests.staged_files import write_query_checkpoint
from tests.supervisor.conftest import ALICE
from tests.supervisor.snapshot_staging import checkpoint_of
from tests.supervisor.upgrade_world import (
    FILTERED,
    SQL,
    Upgrading,
    brought_up,
    commits,
    configure,
    running,
    stopped_with_snapshot,
    upgrading,
)

__all__ = ["upgrading"]

pytestmark = pytest.mark.snapshots


def test_an_upgraded_application_failing_in_the_window_is_rolled_back(
    upgrading: Upgrading,
) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    before = up.manifest()
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade()
    stopped_with_snapshot(up, upgrade)
    new_id = up.current(upgrade).to_application_id or ""
    brought_up(up, new_id)
    checkpoint = checkpoint_of(world, new_id)
    write_query_checkpoint(checkpoint / "evens", 7)  # the new spec went on a little

    world.launcher.exit(-1, 1)
    world.tick()
    assert world.app(new_id).state is AppState.FAILED
    rolled = up.current(upgrade)
    assert rolled.status is UpgradeStatus.ROLLED_BACK, rolled.reason
    assert "failed" in (rolled.reason or "")
    assert rolled.rollback_job_version == 3
    back = world.app(rolled.rollback_application_id or "")
    assert (back.state, back.job_version) == (AppState.STARTING, 3)
    job = world.services.jobs.get(up.job, actor=ALICE)
    assert job.version == 3
    assert job.manifest == before
    assert commits(checkpoint) == [0, 1, 2, 3]  # the upgrade snapshot, restored
    replaced = [
        each
        for each in world.services.snapshots.list(up.job, actor=ALICE)
        if each.kind is SnapshotKind.REPLACED
    ]
    assert [each.batches for each in replaced] == [{"evens": 7}]
    events = up.events(back.id)
    assert "put back as version 3" in events["rolled-back"]
    assert "failed" in events["rolled-back"]
    assert "upgrade-rolling-back" in up.events(new_id)
    with world.services.store.reading() as repos:
        (audited,) = repos.audit.list(action="job.rollback", limit=1)
    assert audited.actor == "alice"
    assert audited.detail["upgrade"] == upgrade.id
    assert "failed" in audited.detail["reason"]
    assert world.app(old).state is AppState.STOPPED


def test_a_health_rule_firing_in_the_window_rolls_the_upgrade_back(upgrading: Upgrading) -> None:
    up, world = upgrading, upgrading.world
    running(up)
    configure(up, (SQL, FILTERED))
    upgrade = up.upgrade()
    stopped_with_snapshot(up, upgrade)
    new_id = up.current(upgrade).to_application_id or ""
    brought_up(up, new_id)
    with world.services.store.transaction() as repos:
        now = world.clock.now()
        repos.health.put(new_id, "lagging", RuleState(holding_since=now, firing_since=now))
    world.tick()
    assert world.app(new_id).state is AppState.TERMINATING  # aborted for the rollback
    assert up.current(upgrade).status is UpgradeStatus.ROLLING_BACK
    world.tick()  # the driver is asked to end
    world.tick()  # and seen gone
    rolled = up.current(upgrade)
    assert rolled.status is UpgradeStatus.ROLLED_BACK
    assert "health rule lagging" in (rolled.reason or "")
    assert world.app(new_id).state is AppState.ABORTED


def test_rollback_off_leaves_a_failed_upgrade_failed(upgrading: Upgrading) -> None:
    up, world = upgrading, upgrading.world
    running(up)
    configure(up, (SQL, FILTERED), ("spec.upgrade", {"rollbackWithinSeconds": 0}))
    upgrade = up.upgrade()
    stopped_with_snapshot(up, upgrade)
    new_id = up.current(upgrade).to_application_id or ""
    world.tick()  # its driver is submitted
    world.launcher.exit(-1, 1)  # and fails before it ever ran
    world.tick()
    assert world.app(new_id).state is AppState.FAILED
    failed = up.current(upgrade)
    assert failed.status is UpgradeStatus.FAILED
    assert "rollback is off" in (failed.reason or "")
    assert world.services.jobs.get(up.job, actor=ALICE).version == 2


def test_a_new_spec_refused_at_its_start_is_rolled_back_at_once(upgrading: Upgrading) -> None:
    up, world = upgrading, upgrading.world
    old = running(up)
    before = up.manifest()
    configure(up, ("spec.configuration.envSecrets", {"API_KEY": "missing-secret"}))
    upgrade = up.upgrade()
    stopped_with_snapshot(up, upgrade)
    rolled = up.current(upgrade)
    assert rolled.status is UpgradeStatus.ROLLED_BACK, rolled.reason
    assert rolled.to_application_id is None
    assert "could not start" in (rolled.reason or "")
    assert "missing-secret" in (rolled.reason or "")
    assert up.manifest() == before
    assert "upgrade-rolling-back" in up.events(old)
    back = world.app(rolled.rollback_application_id or "")
    assert back.state is AppState.STARTING
