"""The /api/v1/jobs routes over real HTTP: the happy paths and every kind of bad input."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import yaml

from tests.api.problems import error_paths, problem_of
from tests.factories import console_manifest, pipeline_manifest, python_manifest


def apply(api: httpx.Client, manifest: dict[str, Any]) -> httpx.Response:
    return api.put(f"/api/v1/jobs/{manifest['metadata']['name']}", json=manifest)


def test_create_then_get(api: httpx.Client, job_name: str) -> None:
    created = api.post("/api/v1/jobs", json=pipeline_manifest(job_name))
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"/api/v1/jobs/{job_name}"
    job = api.get(f"/api/v1/jobs/{job_name}")
    assert job.status_code == 200
    body = job.json()
    assert body["metadata"]["name"] == job_name
    assert body["metadata"]["resourceVersion"] == "1"
    assert body["metadata"]["createdBy"] == "admin"
    assert body["status"]["phase"] == "Idle"
    assert body["spec"]["restartPolicy"]["type"] == "Never"
    assert job.headers["etag"] == '"1"'


def test_create_twice_is_a_conflict(api: httpx.Client, job_name: str) -> None:
    assert api.post("/api/v1/jobs", json=pipeline_manifest(job_name)).status_code == 201
    problem = problem_of(api.post("/api/v1/jobs", json=pipeline_manifest(job_name)), 409)
    assert job_name in problem["detail"]


def test_a_name_with_spaces_round_trips(api: httpx.Client, job_name: str) -> None:
    name = f"Orders to lake {job_name}"
    assert apply(api, pipeline_manifest(name)).status_code == 201
    assert api.get(f"/api/v1/jobs/{name}").json()["metadata"]["name"] == name


def test_apply_creates_then_says_unchanged_then_configures(
    api: httpx.Client, job_name: str
) -> None:
    manifest = pipeline_manifest(job_name)
    first = apply(api, manifest)
    assert first.status_code == 201
    assert first.json()["result"] == "created"
    again = apply(api, manifest)
    assert again.status_code == 200
    assert again.json()["result"] == "unchanged"
    assert again.json()["job"]["metadata"]["resourceVersion"] == "1"
    manifest["metadata"]["description"] = "changed"
    changed = apply(api, manifest)
    assert changed.json()["result"] == "configured"
    assert changed.json()["job"]["metadata"]["resourceVersion"] == "2"


def test_apply_accepts_yaml_and_what_get_printed(api: httpx.Client, job_name: str) -> None:
    text = yaml.safe_dump(pipeline_manifest(job_name))
    created = api.put(
        f"/api/v1/jobs/{job_name}", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert created.status_code == 201, created.text
    printed = api.get(f"/api/v1/jobs/{job_name}").json()
    assert apply(api, printed).json()["result"] == "unchanged"


def test_apply_with_a_stale_resource_version_is_a_conflict(
    api: httpx.Client, job_name: str
) -> None:
    apply(api, pipeline_manifest(job_name))
    stale = api.get(f"/api/v1/jobs/{job_name}").json()
    stale["metadata"]["description"] = "first edit"
    assert apply(api, stale).status_code == 200
    stale["metadata"]["description"] = "second edit from an old copy"
    problem_of(apply(api, stale), 409)
    assert api.get(f"/api/v1/jobs/{job_name}").json()["metadata"]["description"] == "first edit"


def test_apply_cannot_rename(api: httpx.Client, job_name: str) -> None:
    apply(api, pipeline_manifest(job_name))
    response = api.put(f"/api/v1/jobs/{job_name}", json=pipeline_manifest(job_name + "-new"))
    assert error_paths(response) == ["metadata.name"]
    assert "cannot change" in response.json()["detail"]


def test_update_with_a_merge_patch(api: httpx.Client, job_name: str) -> None:
    manifest = pipeline_manifest(job_name)
    manifest["metadata"]["tags"] = {"team": "payments", "tier": "gold"}
    apply(api, manifest)
    patch = {"metadata": {"tags": {"tier": None, "owner": "ana"}}, "spec": {"processing": None}}
    response = api.patch(
        f"/api/v1/jobs/{job_name}",
        json=patch,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["tags"] == {"team": "payments", "owner": "ana"}
    assert response.json()["metadata"]["resourceVersion"] == "2"


def test_update_cannot_change_the_name(api: httpx.Client, job_name: str) -> None:
    apply(api, pipeline_manifest(job_name))
    response = api.patch(f"/api/v1/jobs/{job_name}", json={"metadata": {"name": "other"}})
    assert error_paths(response) == ["metadata.name"]
    assert "cannot change" in response.json()["detail"]


def test_update_with_a_stale_if_match_is_a_conflict(api: httpx.Client, job_name: str) -> None:
    apply(api, pipeline_manifest(job_name))
    api.patch(f"/api/v1/jobs/{job_name}", json={"metadata": {"description": "v2"}})
    response = api.patch(
        f"/api/v1/jobs/{job_name}",
        json={"metadata": {"description": "from v1"}},
        headers={"If-Match": '"1"'},
    )
    problem_of(response, 409)
    assert error_paths(
        api.patch(f"/api/v1/jobs/{job_name}", json={}, headers={"If-Match": "soon"})
    ) == ["header.If-Match"]


def test_an_invalid_update_changes_nothing(api: httpx.Client, job_name: str) -> None:
    apply(api, pipeline_manifest(job_name))
    response = api.patch(
        f"/api/v1/jobs/{job_name}", json={"spec": {"restartPolicy": {"onFailureRetries": -1}}}
    )
    assert error_paths(response) == ["spec.restartPolicy.onFailureRetries"]
    job = api.get(f"/api/v1/jobs/{job_name}").json()
    assert job["metadata"]["resourceVersion"] == "1"


def test_duplicate(api: httpx.Client, job_name: str) -> None:
    apply(api, console_manifest(job_name))
    copy = api.post(f"/api/v1/jobs/{job_name}/duplicate", json={"name": job_name + "-copy"})
    assert copy.status_code == 201, copy.text
    original = api.get(f"/api/v1/jobs/{job_name}").json()
    assert copy.json()["spec"] == original["spec"]
    assert copy.json()["metadata"]["name"] == job_name + "-copy"
    problem_of(api.post(f"/api/v1/jobs/{job_name}/duplicate", json={"name": job_name}), 409)
    assert error_paths(api.post(f"/api/v1/jobs/{job_name}/duplicate", json={})) == ["body.name"]
    bad_name = api.post(f"/api/v1/jobs/{job_name}/duplicate", json={"name": "no/slashes"})
    assert error_paths(bad_name) == ["metadata.name"]


def test_delete(api: httpx.Client, job_name: str) -> None:
    apply(api, pipeline_manifest(job_name))
    assert api.delete(f"/api/v1/jobs/{job_name}").status_code == 204
    problem_of(api.get(f"/api/v1/jobs/{job_name}"), 404)
    problem_of(api.delete(f"/api/v1/jobs/{job_name}"), 404)


def test_template_fills_defaults_and_shows_secrets_by_name(
    api: httpx.Client, job_name: str
) -> None:
    manifest = pipeline_manifest(
        job_name,
        configuration={"envSecrets": {"API_KEY": "payments-api-key"}},
        processing={"guarantee": "EXACTLY_ONCE"},
    )
    apply(api, manifest)
    template = api.get(f"/api/v1/jobs/{job_name}/template").json()
    spec = template["spec"]
    assert spec["restartPolicy"]["onFailureRetryInterval"] == 5
    assert spec["processing"]["snapshotIntervalMillis"] is None
    assert spec["processing"]["snapshotsToKeep"] == 3
    assert spec["configuration"]["envSecrets"] == {"API_KEY": "payments-api-key"}
    checkpoint = spec["pipeline"]["streaming"]["checkpointLocation"]
    assert checkpoint.startswith("file:///checkpoints/")
    assert job_name in checkpoint
    assert template["resolved"]["nodeTypes"]["driver"]["cores"] >= 1


def test_list_filters_searches_and_pages(api: httpx.Client, job_name: str) -> None:
    for index in range(3):
        manifest = pipeline_manifest(f"{job_name}-{index}")
        manifest["metadata"]["tags"] = {"batch": job_name, "index": str(index)}
        apply(api, manifest)
    apply(api, python_manifest(f"{job_name}-py"))

    def names(**params: Any) -> list[str]:
        body = api.get("/api/v1/jobs", params=params).json()
        return [item["metadata"]["name"] for item in body["items"]]

    assert names(search=job_name.upper()) == [f"{job_name}-{i}" for i in range(3)] + [
        f"{job_name}-py"
    ]
    assert names(tag=f"batch={job_name}") == [f"{job_name}-{i}" for i in range(3)]
    assert names(tag=f"batch={job_name}", status="Idle", bundle="default", limit=2) == [
        f"{job_name}-0",
        f"{job_name}-1",
    ]
    page = api.get("/api/v1/jobs", params={"search": job_name, "limit": 2, "offset": 2}).json()
    assert page["total"] == 4
    assert [item["metadata"]["name"] for item in page["items"]] == [
        f"{job_name}-2",
        f"{job_name}-py",
    ]
    assert names(search=job_name, status="Running") == []
    assert names(search=job_name, bundle="no-such-bundle") == []


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"limit": 0}, "query.limit"),
        ({"limit": 501}, "query.limit"),
        ({"offset": -1}, "query.offset"),
        ({"limit": "many"}, "query.limit"),
        ({"tag": "=x"}, "query.tag"),
    ],
)
def test_bad_list_parameters_are_422(api: httpx.Client, params: dict[str, Any], path: str) -> None:
    assert error_paths(api.get("/api/v1/jobs", params=params)) == [path]


def test_an_invalid_manifest_names_every_field(api: httpx.Client, job_name: str) -> None:
    manifest = pipeline_manifest(job_name, restartPolicy={"type": "Sometimes"})
    manifest["spec"]["pipeline"]["outputs"][0]["format"] = "kafka"
    manifest["spec"]["processing"] = {"guarantee": "EXACTLY_ONCE"}
    response = api.post("/api/v1/jobs", json=manifest)
    paths = error_paths(response)
    assert "spec.restartPolicy.type" in paths
    problem_of(api.get(f"/api/v1/jobs/{job_name}"), 404)


def test_exactly_once_into_kafka_says_why(api: httpx.Client, job_name: str) -> None:
    manifest = pipeline_manifest(job_name, processing={"guarantee": "EXACTLY_ONCE"})
    manifest["spec"]["pipeline"]["outputs"][0].update(
        format="kafka", path=None, dataset="kafka-main:evens"
    )
    manifest["spec"]["pipeline"]["outputs"][0].pop("path")
    response = api.post("/api/v1/jobs", json=manifest)
    assert error_paths(response) == ["spec.pipeline.outputs[0].format"]
    assert "cannot give EXACTLY_ONCE" in response.json()["errors"][0]["message"]


def test_a_health_rule_on_an_unknown_metric_or_a_negative_duration_is_named(
    api: httpx.Client, job_name: str
) -> None:
    rules = [
        {"name": "lag", "metric": "lagMinutes", "threshold": 5},
        {"name": "backlog", "metric": "recordsBehind", "threshold": 5, "durationSeconds": -1},
    ]
    response = api.put(
        f"/api/v1/jobs/{job_name}", json=pipeline_manifest(job_name, health={"rules": rules})
    )
    problem_of(response, 422)
    assert error_paths(response) == [
        "spec.health.rules[0].metric",
        "spec.health.rules[1].durationSeconds",
    ]
    problem_of(api.get(f"/api/v1/jobs/{job_name}"), 404)


def test_unknown_bundle_and_node_type_are_named(api: httpx.Client, job_name: str) -> None:
    manifest = pipeline_manifest(job_name, bundle="nobody", instance={"driver": "huge"})
    response = api.post("/api/v1/jobs", json=manifest)
    assert sorted(error_paths(response)) == ["spec.bundle", "spec.instance.driver"]


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b"", "application/json", 400),
        (b"{not json", "application/json", 400),
        (b"\xff\xfe", "application/json", 400),
        (b"key: [unclosed", "application/yaml", 400),
        (b"a: 1\n---\nb: 2\n", "application/yaml", 400),
        (b"[1, 2, 3]", "application/json", 422),
        (b'"just a string"', "application/json", 422),
        (b"null", "application/json", 422),
        (b'{"apiVersion": "streamjobs.io/v1"}', "application/json", 422),
    ],
)
def test_unreadable_or_shapeless_bodies_are_4xx_problems(
    api: httpx.Client, content: bytes, content_type: str, status: int
) -> None:
    for method, path in (("POST", "/api/v1/jobs"), ("PUT", "/api/v1/jobs/whatever")):
        response = api.request(
            method, path, content=content, headers={"Content-Type": content_type}
        )
        problem_of(response, status)


def test_a_yaml_error_names_its_line(api: httpx.Client) -> None:
    text = "apiVersion: streamjobs.io/v1\nkind: StreamingJob\nmetadata:\n  name: [oops\n"
    response = api.post("/api/v1/jobs", content=text, headers={"Content-Type": "application/yaml"})
    assert "line" in json.dumps(problem_of(response, 400)["errors"])
