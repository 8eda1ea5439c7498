"""The roles of the permission matrix, what each route's request works on (``Fresh``), and the
server they call (``World``): one user per role, with its grants and its token."""

from __future__ import annotations

import itertools
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from streamjobs.composition import server_over
from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    Principal,
    PrincipalKind,
    Subject,
)
from streamjobs.domain.destinations import destination_manifest
from streamjobs.domain.snapshots import SnapshotKind, SnapshotStatus
from streamjobs.domain.upgrades import UpgradeMode, UpgradeStatus
from streamjobs.services.container import Services
from streamjobs.services.identity import token_digest
from tests.factories import console_manifest

ADMIN = Actor(Principal("admin", is_admin=True))
OK = "allowed"
UNAUTHENTICATED = ("anonymous", "expired", "revoked")
BUNDLE_ROLES = {
    "view": [Permission.VIEW],
    "view-run": [Permission.VIEW, Permission.RUN],
    "update": [Permission.UPDATE],
    "delete": [Permission.DELETE],
    "creator": [Permission.UPDATE],
}
DOMAIN_ROLES = {
    "creator": DomainPermission.CREATE_JOB,
    "bundle-manager": DomainPermission.MANAGE_BUNDLES,
    "user-manager": DomainPermission.MANAGE_USERS,
}
ROLES = (*UNAUTHENTICATED, "no-grants", *BUNDLE_ROLES, "bundle-manager", "user-manager", "admin")
SIGNED_IN = tuple(role for role in ROLES if role not in UNAUTHENTICATED)


def expect(default: int | str, **per_role: int | str) -> dict[str, int | str]:
    """Every signed-in role gets ``default`` unless named (``view_run`` for ``view-run``)."""
    expected: dict[str, int | str] = dict.fromkeys(UNAUTHENTICATED, 401)
    for role in SIGNED_IN:
        expected[role] = per_role.get(role.replace("-", "_"), default)
    return expected


ANYONE = expect(OK)
ADMIN_ONLY = expect(403, admin=OK)
USER_MANAGERS = expect(403, user_manager=OK, admin=OK)
BUNDLE_MANAGERS = expect(403, bundle_manager=OK, admin=OK)
DIRECTORY_READERS = expect(403, user_manager=OK, bundle_manager=OK, admin=OK)
_HIDDEN = {"no_grants": 404, "bundle_manager": 404, "user_manager": 404}
JOB_VIEW = expect(OK, **_HIDDEN)
JOB_RUN = expect(403, view_run=OK, admin=OK, **_HIDDEN)
JOB_UPDATE = expect(403, update=OK, creator=OK, admin=OK, **_HIDDEN)
JOB_DELETE = expect(403, delete=OK, admin=OK, **_HIDDEN)
JOB_CREATE = expect(403, creator=OK, admin=OK)
JOB_DUPLICATE = expect(403, creator=OK, admin=OK, **_HIDDEN)
SECRETS_VIEW = expect(OK, no_grants=404, user_manager=404)
SECRETS_CHANGE = expect(
    403, update=OK, creator=OK, bundle_manager=OK, admin=OK, no_grants=404, user_manager=404
)
BUNDLE_VIEW = expect(OK, no_grants=404, user_manager=404)
DRIVERS_ONLY = expect(401)


class Fresh:
    """What one (route, role) pair works on, made for it alone when it is first asked for."""

    def __init__(self, services: Services, home: Path, n: int) -> None:
        self._services = services
        self._home = home
        self._n = n

    @cached_property
    def job(self) -> str:
        """A job of the bundle ``mx`` with a live application, which may be duplicated."""
        name = f"job-{self._n}"
        self._services.jobs.create(console_manifest(name, bundle="mx"), actor=ADMIN)
        return name

    @cached_property
    def application(self) -> str:
        """The job's live application, with one attempt and its driver log."""
        services = self._services
        application = services.applications.run(self.job, actor=ADMIN)
        attempt = self._home / "apps" / application.id / "1"
        attempt.mkdir(parents=True)
        (attempt / "stderr.log").write_text("driver started\n")
        with services.store.transaction() as repos:
            repos.applications.add_attempt(
                application.id, number=1, submitted_at=services.clock.now(), directory=str(attempt)
            )
        return application.id

    @cached_property
    def snapshot(self) -> str:
        """A snapshot of ``job``: a failed one, a row without a copy."""
        name = f"snap-{self._n}"
        with self._services.store.transaction() as repos:
            repos.snapshots.add(
                job_name=self.job,
                name=name,
                kind=SnapshotKind.MANUAL,
                status=SnapshotStatus.FAILED,
                requested_at=self._services.clock.now(),
                error="test",
            )
        return name

    @cached_property
    def upgrade(self) -> str:
        """An upgrade of ``job``'s application that failed (so none is in progress)."""
        services = self._services
        with services.store.transaction() as repos:
            upgrade = repos.upgrades.add(
                job_name=self.job,
                mode=UpgradeMode.LAST_STATE,
                from_application_id=self.application,
                from_job_version=1,
                to_job_version=1,
                from_spec={},
                to_spec={},
                snapshot_name=None,
                requested_by="admin",
                requested_at=services.clock.now(),
            )
            repos.upgrades.move(
                upgrade.id,
                expected=UpgradeStatus.STOPPING,
                status=UpgradeStatus.FAILED,
                reason="test",
            )
        return upgrade.id

    @cached_property
    def destination(self) -> str:
        """A Slack notification destination whose URL secret does not exist (its test is a 409)."""
        name = f"dest-{self._n}"
        manifest = destination_manifest(name, {"type": "slack", "urlSecret": "absent"})
        self._services.destinations.create(manifest, actor=ADMIN)
        return name

    @cached_property
    def bundle(self) -> str:
        name = f"bundle-{self._n}"
        self._services.bundles.create(name, actor=ADMIN)
        return name

    @cached_property
    def user(self) -> str:
        """A user with a token, in ``group``, who may run jobs as ``svc-mx``."""
        name = f"user-{self._n}"
        self._services.people.create_user(name, actor=ADMIN)
        self._services.identity.issue_token(name, "first", actor=ADMIN)
        self._services.people.set_service_account_grant(
            "svc-mx", Subject.parse(f"user:{name}"), granted=True, actor=ADMIN
        )
        return name

    @cached_property
    def token_id(self) -> str:
        return self._services.identity.list_tokens(self.user)[0].id

    @cached_property
    def group(self) -> str:
        """A group holding Create Spark Job."""
        name = f"group-{self._n}"
        people = self._services.people
        people.create_group(name, actor=ADMIN)
        people.set_membership(name, self.user, member=True, actor=ADMIN)
        subject = Subject.parse(f"group:{name}")
        people.set_domain_grant(subject, DomainPermission.CREATE_JOB, granted=True, actor=ADMIN)
        return name

    @cached_property
    def secret(self) -> str:
        name = f"secret-{self._n}"
        self._services.secrets.put("mx", name, "value", actor=ADMIN)
        return name

    @cached_property
    def node_type(self) -> str:
        name = f"node-{self._n}"
        self._services.bundles.put_node_type(name, cores=1, memory_mb=256, actor=ADMIN)
        return name

    @cached_property
    def connection(self) -> str:
        """A connection no job uses."""
        name = f"connection-{self._n}"
        self._services.connections.create(files_connection(name), actor=ADMIN)
        return name


def files_connection(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "Connection",
        "metadata": {"name": name},
        "spec": {"type": "files", "root": "file:///tmp/files"},
    }


class World:
    """A server over a fake launcher, its users (one per role) and their tokens."""

    def __init__(self, services: Services, home: Path) -> None:
        self.services = services
        self.home = home
        self.client = TestClient(server_over(services, supervise=False).app)
        self.tokens: dict[str, str | None] = {"anonymous": None}
        self._counter = itertools.count()
        services.bundles.create("mx", actor=ADMIN, data_roots=["file:///tmp/out"])
        services.connections.create(files_connection("files"), actor=ADMIN)
        services.people.create_user("svc-mx", actor=ADMIN, kind=PrincipalKind.SERVICE_ACCOUNT)
        grants = [
            BundleGrant("mx", Subject.parse(f"user:{role}"), permission)
            for role, permissions in BUNDLE_ROLES.items()
            for permission in permissions
        ]
        for role in SIGNED_IN:
            if role != "admin":
                services.people.create_user(role, actor=ADMIN)
            if role in DOMAIN_ROLES:
                subject = Subject.parse(f"user:{role}")
                services.people.set_domain_grant(
                    subject, DOMAIN_ROLES[role], granted=True, actor=ADMIN
                )
            self.tokens[role] = services.identity.issue_token(role, "matrix", actor=ADMIN)
        services.bundles.set_grants("mx", grants, actor=ADMIN)
        for role in ("expired", "revoked"):
            services.people.create_user(role, actor=ADMIN)
        expired = services.identity.issue_token(
            "expired", "old", actor=ADMIN, expires_at=services.clock.now() - timedelta(hours=1)
        )
        self.tokens["expired"] = expired
        self.tokens["revoked"] = services.identity.issue_token("revoked", "gone", actor=ADMIN)
        with services.store.transaction() as repos:
            revoked = repos.tokens.find_by_hash(token_digest(self.tokens["revoked"]))
        assert revoked is not None
        services.identity.revoke_token("revoked", revoked.id, actor=ADMIN)

    def fresh(self) -> Fresh:
        return Fresh(self.services, self.home, next(self._counter))

    def call(self, role: str, method: str, path: str, body: Any) -> int:
        token = self.tokens[role]
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.client.request(method, path, json=body, headers=headers)
        if response.status_code >= 400:
            assert response.headers["content-type"] == "application/problem+json", path
        return response.status_code
