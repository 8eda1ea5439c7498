"""The permission matrix: for every API route and every role, the status code it must answer.

Each (route, role) pair gets fresh resources made by an admin (a job with a live application in
the bundle ``mx``, an empty bundle, a user with a token, a group, a secret, a node type), so the
pairs do not depend on one another. A role is allowed when the answer is a success, or a 409
about the state of things (a second Run, deleting a job with a live application): the permission
check let it through. Every documented route must be in the matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streamjobs.domain.destinations import destination_manifest
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.api.permission_world import (
    ADMIN_ONLY,
    ANYONE,
    BUNDLE_MANAGERS,
    BUNDLE_VIEW,
    DIRECTORY_READERS,
    DRIVERS_ONLY,
    JOB_CREATE,
    JOB_DELETE,
    JOB_DUPLICATE,
    JOB_RUN,
    JOB_UPDATE,
    JOB_VIEW,
    OK,
    ROLES,
    SECRETS_CHANGE,
    SECRETS_VIEW,
    USER_MANAGERS,
    Fresh,
    World,
    files_connection,
)
from tests.factories import pipeline_manifest

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
        lambda f: ("POST", "/api/v1/connections", files_connection(f.job + "-conn")),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/connections/{name}": (
        lambda f: ("GET", "/api/v1/connections/files", None),
        ANYONE,
    ),
    "PUT /api/v1/connections/{name}": (
        lambda f: ("PUT", f"/api/v1/connections/{f.job}-c", files_connection(f.job + "-c")),
        BUNDLE_MANAGERS,
    ),
    "DELETE /api/v1/connections/{name}": (
        lambda f: ("DELETE", f"/api/v1/connections/{f.connection}", None),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/schema/notificationdestination.json": (
        lambda f: ("GET", "/api/v1/schema/notificationdestination.json", None),
        ANYONE,
    ),
    "GET /api/v1/notification-destinations": (
        lambda f: ("GET", "/api/v1/notification-destinations", None),
        ANYONE,
    ),
    "POST /api/v1/notification-destinations": (
        lambda f: (
            "POST",
            "/api/v1/notification-destinations",
            destination_manifest(f.job + "-d", {"type": "slack", "urlSecret": "s"}),
        ),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/notification-destinations/{name}": (
        lambda f: ("GET", f"/api/v1/notification-destinations/{f.destination}", None),
        ANYONE,
    ),
    "PUT /api/v1/notification-destinations/{name}": (
        lambda f: (
            "PUT",
            f"/api/v1/notification-destinations/{f.destination}",
            destination_manifest(f.destination, {"type": "slack", "urlSecret": "other"}),
        ),
        BUNDLE_MANAGERS,
    ),
    "DELETE /api/v1/notification-destinations/{name}": (
        lambda f: ("DELETE", f"/api/v1/notification-destinations/{f.destination}", None),
        BUNDLE_MANAGERS,
    ),
    "POST /api/v1/notification-destinations/{name}/test": (
        lambda f: ("POST", f"/api/v1/notification-destinations/{f.destination}/test", None),
        BUNDLE_MANAGERS,
    ),
    "GET /api/v1/notification-destinations/{name}/deliveries": (
        lambda f: ("GET", f"/api/v1/notification-destinations/{f.destination}/deliveries", None),
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
    "GET /api/v1/applications/{application_id}/state": (
        lambda f: ("GET", f"/api/v1/applications/{f.application}/state", None),
        JOB_VIEW,
    ),
    "POST /api/v1/jobs/{name}/suspend": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/suspend", None),
        JOB_RUN,
    ),
    "GET /api/v1/jobs/{name}/snapshots": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/snapshots", None),
        JOB_VIEW,
    ),
    "POST /api/v1/jobs/{name}/snapshots": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/snapshots", {}),
        JOB_RUN,
    ),
    "GET /api/v1/jobs/{name}/snapshots/{snapshot}": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/snapshots/{f.snapshot}", None),
        JOB_VIEW,
    ),
    "DELETE /api/v1/jobs/{name}/snapshots/{snapshot}": (
        lambda f: ("DELETE", f"/api/v1/jobs/{f.job}/snapshots/{f.snapshot}", None),
        JOB_UPDATE,
    ),
    "POST /api/v1/jobs/{name}/upgrade": (
        lambda f: ("POST", f"/api/v1/jobs/{f.job}/upgrade?dryRun=true", None),
        JOB_RUN,
    ),
    "GET /api/v1/jobs/{name}/upgrades": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/upgrades", None),
        JOB_VIEW,
    ),
    "GET /api/v1/jobs/{name}/upgrades/{upgrade_id}": (
        lambda f: ("GET", f"/api/v1/jobs/{f.job}/upgrades/{f.upgrade}", None),
        JOB_VIEW,
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
    "POST /api/v1/users/{name}/unlock": (
        lambda f: ("POST", f"/api/v1/users/{f.user}/unlock", None),
        USER_MANAGERS,
    ),
    "DELETE /api/v1/users/{name}/sessions": (
        lambda f: ("DELETE", f"/api/v1/users/{f.user}/sessions", None),
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
