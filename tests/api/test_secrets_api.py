"""The /api/v1/bundles/{bundle}/secrets routes over real HTTP: put, list and delete, every kind of
bad input as a 4xx problem, and no value in any answer."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.problems import error_paths, problem_of
from tests.conftest import RunningServer

SECRETS = "/api/v1/bundles/default/secrets"
VALUE = "api-value-that-never-comes-back"


@pytest.fixture
def name() -> str:
    """A secret name no other test uses, since the server is shared."""
    return f"s-{uuid.uuid4().hex[:10]}"


def test_put_creates_then_replaces_and_never_answers_the_value(
    api: httpx.Client, name: str
) -> None:
    created = api.put(f"{SECRETS}/{name}", json={"value": VALUE})
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"{SECRETS}/{name}"
    assert created.headers["etag"] == '"1"'
    body = created.json()
    assert body["result"] == "created"
    assert body["secret"]["name"] == name
    assert (body["secret"]["bundle"], body["secret"]["version"]) == ("default", 1)
    assert (body["secret"]["createdBy"], body["secret"]["updatedBy"]) == ("admin", "admin")
    assert set(body["secret"]) == {
        "name",
        "bundle",
        "version",
        "createdAt",
        "createdBy",
        "updatedAt",
        "updatedBy",
    }
    replaced = api.put(f"{SECRETS}/{name}", json={"value": VALUE + "-2"})
    assert replaced.status_code == 200, replaced.text
    assert (replaced.json()["result"], replaced.json()["secret"]["version"]) == ("replaced", 2)
    listed = api.get(SECRETS)
    assert listed.status_code == 200
    assert name in [item["name"] for item in listed.json()["items"]]
    assert listed.json()["total"] == len(listed.json()["items"])
    for answer in (created, replaced, listed):
        assert VALUE not in answer.text

    deleted = api.delete(f"{SECRETS}/{name}")
    assert deleted.status_code == 204
    assert name not in [item["name"] for item in api.get(SECRETS).json()["items"]]
    problem = problem_of(api.delete(f"{SECRETS}/{name}"), 404)
    assert name in problem["detail"]


def test_changes_are_audited_by_name_only(
    api: httpx.Client, name: str, running_server: RunningServer
) -> None:
    api.put(f"{SECRETS}/{name}", json={"value": VALUE}).raise_for_status()
    api.delete(f"{SECRETS}/{name}").raise_for_status()
    with running_server.services.store.transaction() as repos:
        entries = [e for e in repos.audit.list(limit=500) if e.resource_name.endswith(name)]
    assert [(e.action, e.resource_name) for e in reversed(entries)] == [
        ("secret.created", f"default/{name}"),
        ("secret.deleted", f"default/{name}"),
    ]
    assert VALUE not in repr(entries)
    assert entries[0].source == "127.0.0.1"


def test_a_secret_belongs_to_its_bundle(
    api: httpx.Client, name: str, running_server: RunningServer
) -> None:
    services = running_server.services
    bundle = f"b-{uuid.uuid4().hex[:8]}"
    with services.store.transaction() as repos:
        repos.bundles.add(bundle, services.clock.now())
    other = f"/api/v1/bundles/{bundle}/secrets"
    assert api.put(f"{other}/{name}", json={"value": VALUE}).status_code == 201
    assert [item["name"] for item in api.get(other).json()["items"]] == [name]
    assert name not in [item["name"] for item in api.get(SECRETS).json()["items"]]
    problem_of(api.delete(f"{SECRETS}/{name}"), 404)
    assert api.delete(f"{other}/{name}").status_code == 204


def test_an_unknown_bundle_is_404(api: httpx.Client, name: str) -> None:
    nowhere = "/api/v1/bundles/no-such-bundle/secrets"
    for response in (
        api.get(nowhere),
        api.put(f"{nowhere}/{name}", json={"value": VALUE}),
        api.delete(f"{nowhere}/{name}"),
    ):
        problem = problem_of(response, 404)
        assert "resource bundle 'no-such-bundle' does not exist" in problem["detail"]


@pytest.mark.parametrize(
    ("secret", "body", "paths"),
    [
        ("Bad_Name", {"value": VALUE}, ["path.name"]),
        ("-dash", {"value": VALUE}, ["path.name"]),
        ("k" * 64, {"value": VALUE}, ["path.name"]),
        ("ok-name", {"value": ""}, ["body.value"]),
        ("ok-name", {"value": "x" * 65537}, ["body.value"]),
        ("Bad_Name", {"value": ""}, ["path.name", "body.value"]),
        ("ok-name", {}, ["body.value"]),
        ("ok-name", {"value": 42}, ["body.value"]),
        ("ok-name", {"value": VALUE, "extra": 1}, ["body.extra"]),
        ("ok-name", ["value"], ["body"]),
    ],
)
def test_bad_input_is_422_with_field_paths(
    api: httpx.Client, secret: str, body: object, paths: list[str]
) -> None:
    response = api.put(f"{SECRETS}/{quote(secret, safe='')}", json=body)
    assert error_paths(response) == paths
    assert VALUE not in response.text


def test_an_unreadable_body_is_a_4xx_problem(api: httpx.Client, name: str) -> None:
    for content in (b"", b"not json", b"\xff\xfe"):
        response = api.put(f"{SECRETS}/{name}", content=content)
        assert 400 <= response.status_code < 500, response.text
        problem_of(response, response.status_code)


def test_without_a_token_every_route_is_401(anonymous: httpx.Client, name: str) -> None:
    for method in ("GET", "PUT", "DELETE"):
        path = SECRETS if method == "GET" else f"{SECRETS}/{name}"
        response = anonymous.request(method, path, json={"value": VALUE})
        problem_of(response, 401)


def test_the_routes_are_in_the_openapi_document(api: httpx.Client) -> None:
    paths = api.get("/api/v1/openapi.json").json()["paths"]
    assert set(paths["/api/v1/bundles/{bundle}/secrets"]) == {"get"}
    assert set(paths["/api/v1/bundles/{bundle}/secrets/{name}"]) == {"put", "delete"}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bundle=st.text(min_size=1, max_size=20),
    secret=st.text(min_size=1, max_size=20),
    body=st.binary(max_size=100),
)
def test_random_paths_and_bodies_never_make_a_500(
    api: httpx.Client, bundle: str, secret: str, body: bytes
) -> None:
    path = f"/api/v1/bundles/{quote(bundle, safe='')}/secrets"
    for method, target in (("GET", path), ("PUT", f"{path}/{quote(secret, safe='')}")):
        response = api.request(method, target, content=body)
        assert response.status_code < 500, response.text
    response = api.delete(f"{path}/{quote(secret, safe='')}")
    assert response.status_code < 500, response.text
