"""The permission matrix: for every API route and every role, the status code it must answer.

Each (route, role) pair gets fresh resources made by an admin (a job with a live application in
the bundle ``mx``, an empty bundle, a user with a token, a group, a secret, a node type), so the
pairs do not depend on one another. A role is allowed when the answer is a success, or a 409
about the state of things (a second Run, deleting a job with a live application): the permission
check let it through. Every documented route must be in the matrix.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from streamjobs.api.app import create_app
from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    Principal,
    PrincipalKind,
    Subject,
)
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import Services, open_services
from streamjobs.services.identity import token_digest
from streamjobs.settings import Settings
from tests.factories import pipeline_manifest

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
        """A job of the bundle ``mx`` with a live application."""
        name = f"job-{self._n}"
        self._services.jobs.create(pipeline_manifest(name, bundle="mx"), actor=ADMIN)
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
        self._services.connections.create(_connection(name), actor=ADMIN)
        return name


Request = Callable[[Fresh], tuple[str, str, Any]]
"""Builds the request of a route for fresh resources: (method, path, JSON body or None)."""

MATRIX: dict[str, tuple[Request, dict[str, int | str]]] = {
    "GET /api/v1/openapi.json": (lambda f: ("GET", "/api/v1/openapi.json", None), ANYONE),
    "GET /api/v1/schema/streamingjob.json": (
        lambda f: ("GET", "/api/v1/schema/streamingjob.json", None),
        ANYONE,
    ),
    "GET /api/v1/schema/connection.json": (
        lambda f: ("GET", "/api/v1/schema/connection.json", None),
        ANYONE,
    ),
    "GET /api/v1/jobs": (lambda f: ("GET", "/api/v1/jobs", None), ANYONE),
    "POST /api/v1/jobs": (
        lambda f: ("POST", "/api/v1/jobs", pipeline_manifest(f.job + "-new", bundle="mx")),
        JOB_CREATE,
    ),
    "GET /api/v1/jobs/{name}": (lambda f: ("GET", f"/api/v1/jobs/{f.job}", None), JOB_VIEW),
    "PUT /api/v1/jobs/{name}": (
        lambda f: (
            "PUT",
            f"/api/v1/jobs/{f.job}",
            pipeline_manifest(f.job, bundle="mx", restartPolicy={"type": "Always"}),
        ),
        JOB_UPDATE,
    ),
    "PATCH /api/v1/jobs/{name}": (
        lambda f: ("PATCH", f"/api/v1/jobs/{f.job}", {"metadata": {"description": "changed"}}),
        JOB_UPDATE,
    ),
    "DELETE /api/v1/jobs/{name}": (
        lambda f: ("DELETE", f"/api/v1/jobs/{f.job}", None),
        JOB_DELETE,
    ),
    "POST /api/v1/jobs/{name}/duplicate": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/duplicate", {"name": f.job + "-copy"}),
        JOB_DUPLICATE,
    ),
    "GET /api/v1/jobs/{name}/template": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/template", None),
        JOB_VIEW,
    ),
    "GET /api/v1/connections": (lambda f: ("GET", "/api/v1/connections", None), ANYONE),
    "POST /api/v1/connections": (
        lambda f: ("POST", "/api/v1/connections", _connection(f.job + "-conn")),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/connections/{name}": (
        lambda f: ("GET", "/api/v1/connections/files", None),
        ANYONE,
    ),
    "PUT /api/v1/connections/{name}": (
        lambda f: ("PUT", f"/api/v1/connections/{f.job}-c", _connection(f.job + "-c")),
        BUNDLE_MANAGERS,
    ),
    "DELETE /api/v1/connections/{name}": (
        lambda f: ("DELETE", f"/api/v1/connections/{f.connection}", None),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/bundles/{bundle}/secrets": (
        lambda f: ("GET", "/api/v1/bundles/mx/secrets", None),
        SECRETS_VIEW,
    ),
    "PUT /api/v1/bundles/{bundle}/secrets/{name}": (
        lambda f: ("PUT", f"/api/v1/bundles/mx/secrets/{f.secret}", {"value": "v"}),
        SECRETS_CHANGE,
    ),
    "DELETE /api/v1/bundles/{bundle}/secrets/{name}": (
        lambda f: ("DELETE", f"/api/v1/bundles/mx/secrets/{f.secret}", None),
        SECRETS_CHANGE,
    ),
    "POST /api/v1/jobs/{name}/run": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/run", None),
        JOB_RUN,
    ),
    "POST /api/v1/jobs/{name}/stop": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/stop", None),
        JOB_RUN,
    ),
    "POST /api/v1/jobs/{name}/resume": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/resume", None),
        JOB_RUN,
    ),
    "GET /api/v1/jobs/{name}/applications": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/applications", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications": (lambda f: ("GET", "/api/v1/applications", None), ANYONE),
    "GET /api/v1/applications/{application_id}": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}", None),
        JOB_VIEW,
    ),
    "POST /api/v1/applications/{application_id}/abort": (
        lambda f: ("POST", f"/api/v1/applications/{f.application}/abort", None),
        JOB_RUN,
    ),
    "GET /api/v1/applications/{application_id}/events": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/events", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications/{application_id}/metrics": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/metrics", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications/{application_id}/progress": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/progress", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications/{application_id}/template": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/template", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications/{application_id}/logs": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/logs", None),
        JOB_VIEW,
    ),
    "GET /api/v1/applications/{application_id}/logs/download": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/logs/download", None),
        JOB_VIEW,
    ),
    "POST /api/v1/applications/{application_id}/reports": (
        lambda f: ("POST", f"/api/v1/applications/{f.application}/reports", {"events": []}),
        DRIVERS_ONLY,
    ),
    "GET /api/v1/whoami": (lambda f: ("GET", "/api/v1/whoami", None), ANYONE),
    "GET /api/v1/users": (lambda f: ("GET", "/api/v1/users", None), DIRECTORY_READERS),
    "POST /api/v1/users": (
        lambda f: ("POST", "/api/v1/users", {"name": f.user + "-new"}),
        USER_MANAGERS,
    ),
    "GET /api/v1/users/{name}": (
        lambda f: ("GET", f"/api/v1/users/{f.user}", None),
        DIRECTORY_READERS,
    ),
    "DELETE /api/v1/users/{name}": (
        lambda f: ("DELETE", f"/api/v1/users/{f.user}", None),
        USER_MANAGERS,
    ),
    "PUT /api/v1/users/{name}/run-as/{subject}": (
        lambda f: ("PUT", f"/api/v1/users/svc-mx/run-as/user:{f.user}", None),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/users/{name}/run-as/{subject}": (
        lambda f: ("DELETE", f"/api/v1/users/svc-mx/run-as/user:{f.user}", None),
        USER_MANAGERS,
    ),
    "GET /api/v1/users/{name}/tokens": (
        lambda f: ("GET", f"/api/v1/users/{f.user}/tokens", None),
        USER_MANAGERS,
    ),
    "POST /api/v1/users/{name}/tokens": (
        lambda f: ("POST", f"/api/v1/users/{f.user}/tokens", {"name": "another"}),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/users/{name}/tokens/{token_id}": (
        lambda f: ("DELETE", f"/api/v1/users/{f.user}/tokens/{f.token_id}", None),
        USER_MANAGERS,
    ),
    "GET /api/v1/groups": (lambda f: ("GET", "/api/v1/groups", None), DIRECTORY_READERS),
    "POST /api/v1/groups": (
        lambda f: ("POST", "/api/v1/groups", {"name": f.group + "-new"}),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/groups/{name}": (
        lambda f: ("DELETE", f"/api/v1/groups/{f.group}", None),
        USER_MANAGERS,
    ),
    "PUT /api/v1/groups/{name}/members/{user}": (
        lambda f: ("PUT", f"/api/v1/groups/{f.group}/members/{f.user}", None),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/groups/{name}/members/{user}": (
        lambda f: ("DELETE", f"/api/v1/groups/{f.group}/members/{f.user}", None),
        USER_MANAGERS,
    ),
    "GET /api/v1/permissions": (
        lambda f: ("GET", "/api/v1/permissions", None),
        DIRECTORY_READERS,
    ),
    "PUT /api/v1/permissions/{permission}/{subject}": (
        lambda f: ("PUT", f"/api/v1/permissions/CREATE_JOB/group:{f.group}", None),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/permissions/{permission}/{subject}": (
        lambda f: ("DELETE", f"/api/v1/permissions/CREATE_JOB/group:{f.group}", None),
        USER_MANAGERS,
    ),
    "GET /api/v1/bundles": (lambda f: ("GET", "/api/v1/bundles", None), ANYONE),
    "POST /api/v1/bundles": (
        lambda f: ("POST", "/api/v1/bundles", {"name": f.bundle + "-new"}),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/bundles/{name}": (lambda f: ("GET", "/api/v1/bundles/mx", None), BUNDLE_VIEW),
    "PUT /api/v1/bundles/{name}": (
        lambda f: ("PUT", f"/api/v1/bundles/{f.bundle}", {"quota": {"maxCores": 8}}),
        BUNDLE_MANAGERS,
    ),
    "DELETE /api/v1/bundles/{name}": (
        lambda f: ("DELETE", f"/api/v1/bundles/{f.bundle}", None),
        BUNDLE_MANAGERS,
    ),
    "PUT /api/v1/bundles/{name}/grants": (
        lambda f: (
            "PUT",
            f"/api/v1/bundles/{f.bundle}/grants",
            {"grants": [{"subject": f"user:{f.user}", "permissions": ["VIEW"]}]},
        ),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/node-types": (lambda f: ("GET", "/api/v1/node-types", None), ANYONE),
    "PUT /api/v1/node-types/{name}": (
        lambda f: ("PUT", f"/api/v1/node-types/{f.node_type}", {"cores": 2, "memoryMb": 512}),
        ADMIN_ONLY,
    ),
    "DELETE /api/v1/node-types/{name}": (
        lambda f: ("DELETE", f"/api/v1/node-types/{f.node_type}", None),
        ADMIN_ONLY,
    ),
    "GET /api/v1/audit": (lambda f: ("GET", "/api/v1/audit", None), ADMIN_ONLY),
}


def _connection(name: str) -> dict[str, Any]:
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
        self.client = TestClient(create_app(services=services))
        self.tokens: dict[str, str | None] = {"anonymous": None}
        self._counter = itertools.count()
        services.bundles.create("mx", actor=ADMIN)
        services.connections.create(_connection("files"), actor=ADMIN)
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


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home: Path = tmp_path_factory.mktemp("matrix")
    services = open_services(
        Settings(home=home, checkpoint_root="file:///checkpoints"),
        launchers={Deployment.SINGLE_NODE: FakeLauncher()},
    )
    services.identity.bootstrap_admin()
    yield World(services, home)
    services.store.close()


def test_the_matrix_covers_every_documented_route(world: World) -> None:
    documented = {
        f"{method.upper()} {path}"
        for path, operations in world.client.app.openapi()["paths"].items()  # type: ignore[attr-defined]
        if path.startswith("/api")
        for method in operations
    }
    assert documented | {"GET /api/v1/openapi.json"} == set(MATRIX)


@pytest.mark.parametrize("route", sorted(MATRIX))
def test_each_role_gets_the_expected_answer(world: World, route: str) -> None:
    request, expected = MATRIX[route]
    answers = {}
    for role in ROLES:
        status = world.call(role, *request(world.fresh()))
        allowed = status < 400 or status == 409
        answers[role] = OK if allowed and expected[role] == OK else status
    assert answers == expected
