"""Whatever a client sends, the API answers with a 2xx or a 4xx problem, never a 500."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import pipeline_manifest

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = ["metadata", "spec", "application", "pipeline", "streaming", "inputs", "outputs", "name"]


def mutated(manifest: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    """The manifest with the first dict found along ``path`` given ``value`` at that key."""
    node: Any = manifest
    for key in path[:-1]:
        if isinstance(node, dict) and isinstance(node.get(key), dict):
            node = node[key]
    if isinstance(node, dict):
        node[path[-1]] = value
    return manifest


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.lists(st.sampled_from(FIELDS), min_size=1, max_size=4),
    value=json_values,
    method=st.sampled_from(["POST", "PUT", "PATCH"]),
)
def test_mutated_manifests_never_make_a_500(
    api: httpx.Client, path: list[str], value: Any, method: str
) -> None:
    manifest = mutated(pipeline_manifest("fuzzed"), path, value)
    target = "/api/v1/jobs" if method == "POST" else "/api/v1/jobs/fuzzed"
    response = api.request(method, target, content=json.dumps(manifest))
    assert response.status_code < 500, response.text
    api.delete("/api/v1/jobs/fuzzed")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(max_size=200), name=st.text(min_size=1, max_size=30))
def test_random_bytes_and_names_never_make_a_500(api: httpx.Client, body: bytes, name: str) -> None:
    for method in ("PUT", "PATCH", "GET", "DELETE"):
        response = api.request(method, f"/api/v1/jobs/{quote(name, safe='')}", content=body)
        assert response.status_code < 500, response.text


HOSTILE_ROUTES = [
    ("POST", "/api/v1/jobs"),
    ("PUT", "/api/v1/jobs/hostile"),
    ("PATCH", "/api/v1/jobs/hostile"),
    ("POST", "/api/v1/connections"),
    ("PUT", "/api/v1/connections/hostile"),
    ("POST", "/api/v1/applications/app-hostile/reports"),
]
hostile_bodies = st.one_of(
    st.integers(min_value=1, max_value=200_000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(min_value=1, max_value=5_000).map(
        lambda depth: '{"spec": ' * depth + "0" + "}" * depth
    ),
    st.integers(min_value=2**63 - 2, max_value=2**80).map(
        lambda number: json.dumps({"metadata": {"resourceVersion": number}, "spec": number})
    ),
    st.integers(min_value=1024 * 1024 - 8, max_value=3 * 1024 * 1024).map(lambda size: "[" * size),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(route=st.sampled_from(HOSTILE_ROUTES), body=hostile_bodies, yaml=st.booleans())
def test_deep_huge_and_large_bodies_never_make_a_500(
    api: httpx.Client, route: tuple[str, str], body: str, yaml: bool
) -> None:
    method, path = route
    media_type = "application/yaml" if yaml else "application/json"
    headers = {"Content-Type": media_type, "Authorization": api.headers["Authorization"]}
    response = api.request(method, path, content=body, headers=headers)
    assert response.status_code < 500, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    target=st.sampled_from(
        [
            ("/api/v1/jobs", "offset"),
            ("/api/v1/connections", "offset"),
            ("/api/v1/applications", "offset"),
            ("/api/v1/audit", "offset"),
            ("/api/v1/applications/app-x/events", "after"),
            ("/api/v1/applications/app-x/logs", "start"),
        ]
    ),
    number=st.integers(min_value=2**62, max_value=2**200) | st.integers(max_value=-1),
)
def test_huge_integers_in_queries_never_make_a_500(
    api: httpx.Client, target: tuple[str, str], number: int
) -> None:
    path, parameter = target
    response = api.get(path, params={parameter: number})
    assert response.status_code < 500, response.text
