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
