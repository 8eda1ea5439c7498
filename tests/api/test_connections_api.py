"""The /api/v1/connections routes over real HTTP: the happy paths, every kind of bad input, and
connections kept consistent with the jobs whose datasets use them."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.problems import error_paths, problem_of
from tests.factories import connection_manifest, dataset_job_manifest, pipeline_manifest

CONNECTIONS = "/api/v1/connections"


@pytest.fixture
def name() -> str:
    """A connection name no other test uses, since the server is shared."""
    return f"c-{uuid.uuid4().hex[:10]}"


def apply(api: httpx.Client, manifest: dict[str, Any]) -> httpx.Response:
    return api.put(f"{CONNECTIONS}/{manifest['metadata']['name']}", json=manifest)


def test_create_then_get(api: httpx.Client, name: str) -> None:
    manifest = connection_manifest(
        name, "jdbc", user="streamjobs", secretOptions={"password": "db-password"}
    )
    created = api.post(CONNECTIONS, json=manifest)
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"{CONNECTIONS}/{name}"
    assert created.headers["etag"] == '"1"'
    got = api.get(f"{CONNECTIONS}/{name}")
    assert got.status_code == 200
    body = got.json()
    assert body["kind"] == "Connection"
    assert (body["metadata"]["name"], body["metadata"]["namespace"]) == (name, "default")
    assert (body["metadata"]["resourceVersion"], body["metadata"]["createdBy"]) == ("1", "admin")
    assert body["spec"]["url"] == "jdbc:postgresql://127.0.0.1:5432/analytics"
    assert body["spec"]["secretOptions"] == {"password": "db-password"}
    assert "catalogType" not in body["spec"]
    assert got.headers["etag"] == '"1"'


def test_create_twice_is_a_conflict(api: httpx.Client, name: str) -> None:
    assert api.post(CONNECTIONS, json=connection_manifest(name)).status_code == 201
    problem = problem_of(api.post(CONNECTIONS, json=connection_manifest(name)), 409)
    assert name in problem["detail"]


def test_apply_creates_then_says_unchanged_then_configures(api: httpx.Client, name: str) -> None:
    manifest = connection_manifest(name, "lakehouse")
    first = api.put(
        f"{CONNECTIONS}/{name}",
        content=yaml.safe_dump(manifest),
        headers={"Content-Type": "application/yaml"},
    )
    assert first.status_code == 201, first.text
    assert first.json()["result"] == "created"
    assert first.json()["connection"]["spec"]["catalogType"] == "hadoop"
    printed = api.get(f"{CONNECTIONS}/{name}").json()
    again = apply(api, printed)
    assert (again.status_code, again.json()["result"]) == (200, "unchanged")
    manifest["spec"]["warehouse"] = "s3a://bucket/lake"
    changed = apply(api, manifest)
    assert changed.json()["result"] == "configured"
    assert changed.json()["connection"]["metadata"]["resourceVersion"] == "2"
    assert changed.headers["etag"] == '"2"'


def test_apply_with_a_stale_resource_version_is_a_conflict(api: httpx.Client, name: str) -> None:
    apply(api, connection_manifest(name))
    stale = api.get(f"{CONNECTIONS}/{name}").json()
    stale["metadata"]["description"] = "first edit"
    assert apply(api, stale).status_code == 200
    stale["metadata"]["description"] = "second edit from an old copy"
    problem_of(apply(api, stale), 409)
    assert api.get(f"{CONNECTIONS}/{name}").json()["metadata"]["description"] == "first edit"


def test_apply_cannot_rename(api: httpx.Client, name: str) -> None:
    apply(api, connection_manifest(name))
    response = api.put(f"{CONNECTIONS}/{name}", json=connection_manifest(name + "-new"))
    assert error_paths(response) == ["metadata.name"]
    assert "cannot change" in response.json()["detail"]


def test_an_invalid_manifest_names_every_field_and_stores_nothing(
    api: httpx.Client, name: str
) -> None:
    manifest = connection_manifest(
        name,
        "kafka",
        root="/landing",
        options={"password": "hunter2", "kafka.bootstrap.servers": "a:1"},
    )
    del manifest["spec"]["bootstrapServers"]
    response = api.post(CONNECTIONS, json=manifest)
    assert error_paths(response) == [
        "spec.bootstrapServers",
        "spec.root",
        "spec.options.password",
        'spec.options["kafka.bootstrap.servers"]',
    ]
    assert "hunter2" not in response.text
    problem_of(api.get(f"{CONNECTIONS}/{name}"), 404)


def test_a_job_manifest_is_not_a_connection(api: httpx.Client) -> None:
    response = api.post(CONNECTIONS, json=pipeline_manifest("a-job"))
    paths = error_paths(response)
    assert "kind" in paths
    assert "spec.application" in paths


def test_delete_honours_if_match(api: httpx.Client, name: str) -> None:
    apply(api, connection_manifest(name))
    apply(api, connection_manifest(name, options={"a": "1"}))
    problem_of(api.delete(f"{CONNECTIONS}/{name}", headers={"If-Match": '"1"'}), 409)
    bad = api.delete(f"{CONNECTIONS}/{name}", headers={"If-Match": "soon"})
    assert error_paths(bad) == ["header.If-Match"]
    assert api.delete(f"{CONNECTIONS}/{name}", headers={"If-Match": '"2"'}).status_code == 204
    problem_of(api.get(f"{CONNECTIONS}/{name}"), 404)
    problem_of(api.delete(f"{CONNECTIONS}/{name}"), 404)


def test_jobs_and_the_connections_they_use_stay_consistent(
    api: httpx.Client, name: str, job_name: str
) -> None:
    landing = f"{name}-landing"
    job = dataset_job_manifest(job_name, reads=f"{name}:orders", writes=f"{landing}:orders")
    missing = api.post("/api/v1/jobs", json=job)
    assert error_paths(missing) == [
        "spec.pipeline.inputs[0].dataset",
        "spec.pipeline.outputs[0].dataset",
    ]
    assert f"connection '{name}' does not exist (known: " in missing.json()["errors"][0]["message"]

    apply(api, connection_manifest(name, "files"))
    apply(api, connection_manifest(landing, "files"))
    misfit = api.post("/api/v1/jobs", json=job)
    assert error_paths(misfit) == ["spec.pipeline.inputs[0].dataset"]
    assert "format kafkajson needs a kafka connection" in misfit.json()["detail"]

    apply(api, connection_manifest(name, "kafka"))
    assert api.post("/api/v1/jobs", json=job).status_code == 201
    used = problem_of(api.delete(f"{CONNECTIONS}/{name}"), 409)
    assert f"used by the datasets of job '{job_name}'" in used["detail"]
    retyped = problem_of(apply(api, connection_manifest(name, "jdbc")), 409)
    assert f"job '{job_name}'" in retyped["detail"]
    assert api.get(f"{CONNECTIONS}/{name}").json()["spec"]["type"] == "kafka"

    assert api.delete(f"/api/v1/jobs/{job_name}").status_code == 204
    assert api.delete(f"{CONNECTIONS}/{name}").status_code == 204


def test_list_filters_searches_and_pages(api: httpx.Client, name: str) -> None:
    for suffix, connection_type in (("a", "kafka"), ("b", "files"), ("c", "kafka")):
        apply(api, connection_manifest(f"{name}-{suffix}", connection_type))

    def names(**params: Any) -> list[str]:
        body = api.get(CONNECTIONS, params=params).json()
        return [item["metadata"]["name"] for item in body["items"]]

    assert names(search=name.upper()) == [f"{name}-a", f"{name}-b", f"{name}-c"]
    assert names(search=name, type="kafka") == [f"{name}-a", f"{name}-c"]
    page = api.get(CONNECTIONS, params={"search": name, "limit": 2, "offset": 1}).json()
    assert (page["total"], page["limit"], page["offset"]) == (3, 2, 1)
    assert [item["metadata"]["name"] for item in page["items"]] == [f"{name}-b", f"{name}-c"]


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"limit": 0}, "query.limit"),
        ({"offset": -1}, "query.offset"),
        ({"limit": "many"}, "query.limit"),
        ({"type": "s3"}, "query.type"),
    ],
)
def test_bad_list_parameters_are_422(api: httpx.Client, params: dict[str, Any], path: str) -> None:
    assert error_paths(api.get(CONNECTIONS, params=params)) == [path]


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b"", "application/json", 400),
        (b"{not json", "application/json", 400),
        (b"a: 1\n---\nb: 2\n", "application/yaml", 400),
        (b"[1, 2, 3]", "application/json", 422),
        (b"null", "application/json", 422),
        (b'{"kind": "Connection"}', "application/json", 422),
    ],
)
def test_unreadable_or_shapeless_bodies_are_4xx_problems(
    api: httpx.Client, content: bytes, content_type: str, status: int
) -> None:
    for method, path in (("POST", CONNECTIONS), ("PUT", f"{CONNECTIONS}/whatever")):
        response = api.request(
            method, path, content=content, headers={"Content-Type": content_type}
        )
        problem_of(response, status)


def test_the_connection_schema_is_served_and_documented(api: httpx.Client) -> None:
    schema = api.get("/api/v1/schema/connection.json").json()
    assert schema["title"] == "Connection"
    paths = api.get("/api/v1/openapi.json").json()["paths"]
    assert {"get", "post"} <= paths[CONNECTIONS].keys()
    assert {"get", "put", "delete"} <= paths[f"{CONNECTIONS}/{{name}}"].keys()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=3)
    ),
    max_leaves=10,
)
FIELDS = ["metadata", "spec", "name", "type", "options", "secretOptions", "url", "warehouse"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=st.sampled_from(FIELDS), value=json_values, inside_spec=st.booleans())
def test_mutated_connections_never_make_a_500(
    api: httpx.Client, key: str, value: Any, inside_spec: bool
) -> None:
    manifest = connection_manifest("fuzzed-connection", "jdbc")
    (manifest["spec"] if inside_spec else manifest)[key] = value
    for method, path in (("POST", CONNECTIONS), ("PUT", f"{CONNECTIONS}/fuzzed-connection")):
        response = api.request(method, path, content=json.dumps(manifest))
        assert response.status_code < 500, response.text
    api.delete(f"{CONNECTIONS}/fuzzed-connection")
