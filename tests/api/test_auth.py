"""Every /api route needs a valid bearer token; /healthz does not; failures are problem+json."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from streamjobs.server_app import create_app
from streamjobs.services.identity import BOOTSTRAP_ACTOR
from tests.api.problems import problem_of
from tests.conftest import RunningServer


def api_routes(running_server: RunningServer) -> list[tuple[str, str]]:
    """Every documented /api route, plus the OpenAPI document itself."""
    paths = create_app(services=running_server.services).openapi()["paths"]
    documented = [
        (method.upper(), path.replace("{name}", "some-job"))
        for path, operations in paths.items()
        if path.startswith("/api")
        for method in operations
    ]
    return sorted([*documented, ("GET", "/api/v1/openapi.json")])


def test_healthz_answers_without_a_token(anonymous: httpx.Client) -> None:
    response = anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_every_api_route_refuses_a_request_without_a_token(
    running_server: RunningServer, anonymous: httpx.Client
) -> None:
    routes = api_routes(running_server)
    assert ("GET", "/api/v1/openapi.json") in routes
    assert len(routes) >= 10
    for method, path in routes:
        response = anonymous.request(method, path, json={})
        problem = problem_of(response, 401)
        assert response.headers["www-authenticate"] == "Bearer", (method, path)
        assert "Authorization" in problem["detail"]


@pytest.mark.parametrize(
    "header",
    ["Bearer sj_not-a-real-token", "Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer  x y", "sj_token"],
)
def test_a_wrong_or_malformed_authorization_header_is_401(
    anonymous: httpx.Client, header: str
) -> None:
    response = anonymous.get("/api/v1/jobs", headers={"Authorization": header})
    problem_of(response, 401)


def test_an_expired_token_is_401(running_server: RunningServer, anonymous: httpx.Client) -> None:
    identity = running_server.services.identity
    past = running_server.services.clock.now() - timedelta(minutes=1)
    token = identity.issue_token("admin", "expired", actor=BOOTSTRAP_ACTOR, expires_at=past)
    response = anonymous.get("/api/v1/jobs", headers={"Authorization": f"Bearer {token}"})
    assert "expired" in problem_of(response, 401)["detail"]


def test_a_revoked_token_is_401(running_server: RunningServer, anonymous: httpx.Client) -> None:
    services = running_server.services
    token = services.identity.issue_token("admin", "to-revoke", actor=BOOTSTRAP_ACTOR)
    headers = {"Authorization": f"Bearer {token}"}
    assert anonymous.get("/api/v1/jobs", headers=headers).status_code == 200
    record = next(t for t in services.identity.list_tokens("admin") if t.name == "to-revoke")
    services.identity.revoke_token("admin", record.id, actor=BOOTSTRAP_ACTOR)
    problem_of(anonymous.get("/api/v1/jobs", headers=headers), 401)


def test_openapi_and_manifest_schema_are_served(api: httpx.Client) -> None:
    openapi = api.get("/api/v1/openapi.json").json()
    assert openapi["openapi"].startswith("3.")
    assert "/api/v1/jobs/{name}" in openapi["paths"]
    schema = api.get("/api/v1/schema/streamingjob.json").json()
    assert "spec" in schema["properties"]


def test_an_unknown_route_is_a_problem_document(api: httpx.Client) -> None:
    problem_of(api.get("/api/v1/nothing-here"), 404)
    problem_of(api.post("/healthz"), 405)
