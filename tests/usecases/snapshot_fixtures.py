"""What the snapshot service tests share: a bundle with a data root of the test's own, a
pipeline job in it with a RUNNING application (stored as the Run would), its checkpoint and
attempt directory on disk, and a snapshot staged there as the runner stages one."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streamjobs.domain.access import Actor, BundleGrant, Permission, Principal, Subject
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.snapshots import (
    SNAPSHOTS_DIRECTORY,
    OutputPosition,
    SnapshotKind,
    StagedSnapshot,
    delta_commit_file,
)
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import AppState
from streamjobs.services.container import Services
from streamjobs.services.snapshot_restore import local_checkpoint
from streamjobs.services.snapshots import SnapshotService
from streamjobs.store import ApplicationRecord
from tests.factories import pipeline_manifest
from tests.staged_files import write_query_checkpoint, write_staged_snapshot

ADMIN = Actor(Principal("admin", is_admin=True))
BUNDLE = "snaps"
QUERY = "sums"
"""The one output (and query) of the tests' jobs."""


@dataclass(frozen=True)
class World:
    """The services, the snapshot service over them, and where things lie on disk."""

    services: Services
    snapshots: SnapshotService
    clock: FakeClock
    data: Path
    snapshot_root: Path
    apps: Path

    def job(self, name: str | None = None, **spec: Any) -> str:
        """A pipeline job of the bundle writing Delta into the data root; its name."""
        name = name or f"job-{uuid.uuid4().hex[:8]}"
        manifest = pipeline_manifest(name, bundle=BUNDLE, **spec)
        manifest["spec"]["pipeline"]["outputs"] = [
            {"name": QUERY, "format": "delta", "path": str(self.output(name))}
        ]
        manifest["spec"]["pipeline"]["steps"][0]["sequence"][0]["name"] = QUERY
        self.services.jobs.create(manifest, actor=ADMIN)
        return name

    def output(self, job: str) -> Path:
        return self.data / job / QUERY

    def checkpoint(self, job: str) -> Path:
        with self.services.store.reading() as repos:
            manifest = repos.jobs.get(job).manifest
        root = self.services.settings.resolved_checkpoint_root
        found = local_checkpoint(parse_manifest(manifest, checkpoint_root=root), root)
        assert found is not None
        return found

    def running(self, job: str, state: AppState = AppState.RUNNING) -> ApplicationRecord:
        """A live application of ``job`` in ``state``, stored as Run stores one."""
        root = self.services.settings.resolved_checkpoint_root
        with self.services.store.transaction() as repos:
            record = repos.jobs.get(job)
            job_spec = parse_manifest(record.manifest, checkpoint_root=root)
            spec = resolved_template(job_spec, checkpoint_root=root)
            return repos.applications.add(
                job_name=job,
                namespace=record.namespace,
                bundle=record.bundle,
                tags={},
                spec=spec,
                state=state,
                triggered_by="admin",
                run_as="admin",
                at=self.clock.now(),
                job_version=record.version,
            )

    def end(self, application: ApplicationRecord, state: AppState = AppState.STOPPED) -> None:
        with self.services.store.transaction() as repos:
            current = repos.applications.get(application.id)
            repos.applications.update(
                current.id, version=current.version, at=self.clock.now(), state=state
            )

    def stage(
        self,
        application: ApplicationRecord,
        name: str,
        *,
        batch: int = 2,
        kind: SnapshotKind = SnapshotKind.MANUAL,
        positions: list[OutputPosition] | None = None,
        error: str | None = None,
        record: str | None = None,
    ) -> Path:
        """Stage the snapshot ``name`` in the application's first attempt directory as the
        runner does (the copy, then the record); its staged directory."""
        if record is None:
            record = staged_record(name, kind, self.clock, batch, positions, error)
        return write_staged_snapshot(
            self.apps / application.id / "1" / SNAPSHOTS_DIRECTORY / name,
            record,
            {QUERY: batch} if error is None else {},
        )

    def grant(self, user: str, *permissions: Permission) -> Actor:
        """A user holding ``permissions`` on the bundle."""
        self.services.people.create_user(user, actor=ADMIN)
        current = self.services.bundles.get(BUNDLE, actor=ADMIN).grants
        subject = Subject.parse(f"user:{user}")
        added = [BundleGrant(BUNDLE, subject, permission) for permission in permissions]
        self.services.bundles.set_grants(BUNDLE, [*current, *added], actor=ADMIN)
        return Actor(self.services.identity.principal(user))


def write_checkpoint(directory: Path, batch: int, *, query_id: str = "query-1") -> None:
    """A streaming query's checkpoint under ``directory/<QUERY>`` that committed 0..``batch``."""
    write_query_checkpoint(directory / QUERY, batch, query_id=query_id)


def staged_record(
    name: str,
    kind: SnapshotKind,
    clock: FakeClock,
    batch: int,
    positions: list[OutputPosition] | None,
    error: str | None,
) -> str:
    record = StagedSnapshot(
        name=name,
        kind=kind,
        taken_at=clock.now().isoformat(),
        batches={} if error else {QUERY: batch},
        positions=positions if positions is not None else [delta_at(batch)],
        error=error,
    )
    return json.dumps(record.to_wire())


def delta_at(version: int, txn_version: int | None = None) -> OutputPosition:
    return OutputPosition(
        output=QUERY,
        format="delta",
        version=version,
        txn_app_id="query-1",
        txn_version=version if txn_version is None else txn_version,
    )


def write_delta_log(table: Path, versions: int, *, app_id: str = "query-1") -> None:
    """A Delta table's log by hand: commits 0..``versions - 1``, each a streaming write."""
    log = table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    for version in range(versions):
        lines = [
            {"commitInfo": {"operation": "STREAMING UPDATE"}},
            {"txn": {"appId": app_id, "version": version}},
        ]
        (log / delta_commit_file(version)).write_text("\n".join(map(json.dumps, lines)) + "\n")


@pytest.fixture
def world(services: Services, clock: FakeClock, tmp_path: Path) -> World:
    data = tmp_path / "data"
    data.mkdir()
    services.bundles.create(BUNDLE, actor=ADMIN, data_roots=[data.as_uri()])
    snapshot_root = tmp_path / "snapshot-root"
    apps = services.settings.apps_directory
    return World(
        services=services,
        snapshots=SnapshotService(
            store=services.store,
            clock=clock,
            snapshot_root=snapshot_root,
            apps_directory=apps,
            checkpoint_root=services.settings.resolved_checkpoint_root,
            request_timeout=600.0,
        ),
        clock=clock,
        data=data,
        snapshot_root=snapshot_root,
        apps=apps,
    )
