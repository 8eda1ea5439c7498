"""Upgrades under a ticked supervisor over the fake launcher, for the upgrade tests: a server
whose compatibility check is a stand-in that answers as told (``tests/spark/test_dry_run.py``
runs the real one), a pipeline job of the test's own, and the runner's part played by hand (the
upgrade snapshot staged in the stopping driver's attempt directory, the checkpoint written as
Spark would)."""

from __future__ import annotations

import dataclasses
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from streamjobs.composition import server_over
from streamjobs.domain.access import Actor
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.compatibility import Incompatibility
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.snapshots import SnapshotKind
from streamjobs.domain.states import AppState
from streamjobs.domain.upgrades import UpgradeMode
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.compatibility import CompatibilityReport
from streamjobs.services.container import open_services
from streamjobs.services.upgrades import UpgradeService
from streamjobs.settings import Settings
from streamjobs.store.upgrades import UpgradeRecord
from tests.factories import changed, pipeline_manifest
from tests.staged_files import write_query_checkpoint
from tests.supervisor.conftest import ALICE, World
from tests.supervisor.snapshot_staging import checkpoint_of, stage_snapshot

SQL = "spec.pipeline.steps[0].sequence[0].sql"
FILTERED = "SELECT * FROM ticks WHERE value % 2 = 0"


@dataclass
class FakeCheck:
    """The compatibility check, answering with ``refusals`` (none: the new spec fits)."""

    refusals: list[Incompatibility] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def check(
        self, job_name: str, new_manifest: dict[str, Any] | None = None, *, actor: Actor
    ) -> CompatibilityReport:
        self.asked.append(job_name)
        return CompatibilityReport(not self.refusals, list(self.refusals), [], None)


@dataclass
class Upgrading:
    world: World
    check: FakeCheck
    job: str

    @property
    def upgrades(self) -> UpgradeService:
        upgrades = self.world.services.upgrades
        assert upgrades is not None
        return upgrades

    def upgrade(self, mode: UpgradeMode = UpgradeMode.LAST_STATE) -> UpgradeRecord:
        return self.upgrades.upgrade(self.job, mode=mode, actor=ALICE)

    def current(self, upgrade: UpgradeRecord) -> UpgradeRecord:
        return self.upgrades.get(self.job, upgrade.id, actor=ALICE)

    def manifest(self) -> dict[str, Any]:
        return self.world.services.jobs.get(self.job, actor=ALICE).manifest

    def events(self, application_id: str | None) -> dict[str, str]:
        assert application_id is not None
        listed = self.world.services.applications.events(application_id, actor=ALICE)
        return {event.kind: event.message for event in listed}


@pytest.fixture
def upgrading(database_url: str, tmp_path: Path) -> Iterator[Upgrading]:
    """A supervised server over the fake launcher whose upgrades use ``FakeCheck``, and a
    pipeline job of this test's own writing under ``/tmp/out/<job>``."""
    clock, launcher, check = FakeClock(), FakeLauncher(), FakeCheck()
    settings = Settings(
        home=tmp_path / "home",
        database_url=database_url,
        public_url="http://127.0.0.1:1",
        heartbeat_timeout_seconds=60,
        abort_grace_seconds=10,
    )
    services = open_services(settings, clock=clock, launchers={Deployment.SINGLE_NODE: launcher})
    upgrades = UpgradeService(
        store=services.store,
        clock=clock,
        checkpoint_root=settings.resolved_checkpoint_root,
        starter=services.applications,
        places=services.jobs.places,
        compatibility=check,
    )
    services = dataclasses.replace(services, upgrades=upgrades)
    server = server_over(services, supervise=True, executor_reader=lambda handle: None)
    assert server.supervisor is not None
    world = World(services=services, launcher=launcher, clock=clock, supervisor=server.supervisor)
    job = f"up-{uuid.uuid4().hex[:10]}"
    yield Upgrading(world=world, check=check, job=job)
    server.close()
    shutil.rmtree(f"/tmp/out/{job}", ignore_errors=True)


def running(up: Upgrading, **spec: object) -> str:
    """Create (or configure) the job and bring a new application of it to RUNNING, its
    checkpoint at batch 3; its id."""
    world = up.world
    world.services.jobs.apply(up.job, pipeline_manifest(up.job, **spec), actor=ALICE)
    application = world.services.applications.run(up.job, actor=ALICE)
    return brought_up(up, application.id, checkpoint_batch=3)


def brought_up(up: Upgrading, application_id: str, *, checkpoint_batch: int | None = None) -> str:
    world = up.world
    world.tick()
    world.report(application_id, {"type": "heartbeat"})
    world.tick()
    assert world.app(application_id).state is AppState.RUNNING
    if checkpoint_batch is not None:
        write_query_checkpoint(checkpoint_of(world, application_id) / "evens", checkpoint_batch)
    return application_id


def keep_running(up: Upgrading, application_id: str, seconds: int) -> None:
    """Let ``seconds`` pass, the driver reporting every half minute, ticking at each report."""
    while seconds > 0:
        step = min(30, seconds)
        up.world.clock.advance(step)
        up.world.report(application_id, {"type": "heartbeat"})
        up.world.tick()
        seconds -= step


def configure(up: Upgrading, *changes: tuple[str, Any]) -> None:
    manifest = changed(up.manifest(), *changes)
    up.world.services.jobs.apply(up.job, manifest, actor=ALICE)


def stopped_with_snapshot(up: Upgrading, upgrade: UpgradeRecord, *, batch: int = 3) -> None:
    """The tick that stops the old driver, the runner staging the upgrade snapshot, and the tick
    that sees the driver gone, collects the snapshot and starts the new spec."""
    world = up.world
    assert upgrade.from_application_id is not None
    assert upgrade.snapshot_name is not None
    world.tick()
    driver = world.launcher.drivers[-1]
    assert driver.stop_snapshot is not None
    assert (driver.stop_snapshot.name, driver.stop_snapshot.kind) == (
        upgrade.snapshot_name,
        SnapshotKind.UPGRADE,
    )
    stage_snapshot(
        world,
        upgrade.from_application_id,
        upgrade.snapshot_name,
        SnapshotKind.UPGRADE,
        batches={"evens": batch},
    )
    world.tick()


def commits(checkpoint: Path) -> list[int]:
    return sorted(int(path.name) for path in (checkpoint / "evens" / "commits").iterdir())
