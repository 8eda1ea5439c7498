"""Documents and numbers are bounded (issue 20, items 3 and 7): nesting deeper than the limit and
YAML aliases that expand past it are 422s naming the limit, on the job, connection and report
routes, the web form's live check and the CLI's reader; integers past what the store holds are
422s naming the parameter, on SQLite and PostgreSQL. Before, each was a 500 or a huge row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamjobs.cli.manifests import read_manifests
from streamjobs.domain.documents import MAX_NESTING_DEPTH, DocumentTooLarge
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.api.problems import problem_of
from tests.factories import RATE_PIPELINE_YAML, changed, connection_manifest, pipeline_manifest
from tests.live_server import live_server
from tests.staged_server import stage
from tests.web.conftest import Browser, browser

__all__ = ["browser", "stage"]

YAML = {"Content-Type": "application/yaml"}
TOO_LARGE = 2**63
MANIFEST_ROUTES = [
    ("POST", "/api/v1/jobs"),
    ("PUT", "/api/v1/jobs/deep"),
    ("PATCH", "/api/v1/jobs/deep"),
    ("POST", "/api/v1/connections"),
    ("PUT", "/api/v1/connections/deep"),
]


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def billion_laughs() -> str:
    """A 110 KB manifest whose aliases expand to 10 000 copies of a 10 KB string: 100 MB."""
    lines = ["apiVersion: streamjobs.io/v1", "kind: StreamingJob", "metadata: {name: laughs}"]
    lines.append(f"x0: &x0 '{'ha' * 5000}'")
    lines += [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, 5)]
    lines.append("spec: {tags: {laughs: *x4}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("method", "path"), MANIFEST_ROUTES)
@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 950, 100_000])
def test_json_nested_past_the_limit_is_a_422_naming_it(
    api: httpx.Client, method: str, path: str, depth: int
) -> None:
    body = '{"spec": ' * depth + "1" + "}" * depth
    response = api.request(method, path, content=body)
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in problem_of(response, 422)["detail"]


@pytest.mark.parametrize(("method", "path"), MANIFEST_ROUTES)
def test_yaml_nested_past_the_limit_is_a_422_naming_it(
    api: httpx.Client, method: str, path: str
) -> None:
    body = "spec: " + "[" * 10_000 + "]" * 10_000 + "\n"
    response = api.request(method, path, content=body, headers=YAML)
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in problem_of(response, 422)["detail"]


def test_nesting_up_to_the_limit_is_read(api: httpx.Client, job_name: str) -> None:
    manifest = changed(pipeline_manifest(job_name), ("spec.extra", nested(MAX_NESTING_DEPTH - 2)))
    response = api.put(f"/api/v1/jobs/{job_name}", content=json.dumps(manifest))
    assert "levels" not in problem_of(response, 422)["detail"]


@pytest.mark.parametrize(("method", "path"), MANIFEST_ROUTES)
def test_aliases_that_expand_past_the_limit_are_a_422_naming_it(
    api: httpx.Client, method: str, path: str
) -> None:
    text = billion_laughs()
    assert len(text) < 120_000
    response = api.request(method, path, content=text, headers=YAML)
    problem = problem_of(response, 422)
    assert "characters once its aliases are expanded (the limit)" in problem["detail"]
    assert api.get("/api/v1/jobs/laughs").status_code == 404


def test_the_cli_reader_refuses_the_same_aliases(tmp_path: Path) -> None:
    manifest = tmp_path / "laughs.yaml"
    manifest.write_text(billion_laughs())
    with pytest.raises(DocumentTooLarge, match="once its aliases are expanded"):
        read_manifests([str(manifest)])


def test_the_pipeline_check_bounds_nesting_and_aliases(browser: Browser) -> None:
    def check(body: bytes) -> httpx.Response:
        headers = {"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"}
        return browser.client.post("/jobs/validate-pipeline", content=body, headers=headers)

    deep = check(b'{"yaml": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert deep.status_code == 422
    [error] = deep.json()["errors"]
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in error["message"]

    laughs = billion_laughs().replace("spec: {tags: {laughs: *x4}}", RATE_PIPELINE_YAML)
    [error] = check(json.dumps({"yaml": laughs}).encode()).json()["errors"]
    assert "once its aliases are expanded" in error["message"]

    assert check(json.dumps({"yaml": RATE_PIPELINE_YAML}).encode()).json() == {"errors": []}


@pytest.fixture
def server_on_each_store(database_url: str, tmp_path: Path) -> Iterator[httpx.Client]:
    settings = Settings(
        home=tmp_path / "home", database_url=database_url, checkpoint_root="file:///checkpoints"
    )
    services = open_services(settings)
    token = services.identity.bootstrap_admin().token
    with live_server(services) as url:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            yield client
    services.store.close()


QUERY_INTEGERS = [
    ("/api/v1/jobs", "offset"),
    ("/api/v1/connections", "offset"),
    ("/api/v1/applications", "offset"),
    ("/api/v1/jobs/{job}/applications", "offset"),
    ("/api/v1/audit", "offset"),
    ("/api/v1/applications/{application}/events", "after"),
    ("/api/v1/applications/{application}/progress", "limit"),
    ("/api/v1/applications/{application}/logs", "start"),
    ("/api/v1/applications/{application}/logs", "end"),
    ("/api/v1/applications/{application}/logs", "tail"),
    ("/api/v1/applications/{application}/logs", "attempt"),
    ("/api/v1/applications/{application}/logs/download", "attempt"),
]


def test_integers_past_what_the_store_holds_are_422s_naming_them(
    server_on_each_store: httpx.Client,
) -> None:
    api = server_on_each_store
    job = pipeline_manifest("bounded")
    assert api.put("/api/v1/jobs/bounded", json=job).status_code == 201
    started = api.post("/api/v1/jobs/bounded/run")
    assert started.status_code == 201, started.text
    names = {"job": "bounded", "application": started.json()["id"]}
    for route, parameter in QUERY_INTEGERS:
        path = route.format(**names)
        for value in (TOO_LARGE, 10**30):
            response = api.get(path, params={parameter: value})
            assert f"query.{parameter}" in problem_of(response, 422)["detail"], (path, value)
        largest = api.get(path, params={parameter: TOO_LARGE - 1})
        assert largest.status_code < 500, (path, largest.text)
    assert api.get("/api/v1/jobs", params={"offset": -1}).status_code == 422


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/v1/bundles", {"name": "big", "quota": {"maxCores": TOO_LARGE}}),
        ("PUT", "/api/v1/node-types/big", {"cores": TOO_LARGE, "memoryMb": 1024}),
        ("POST", "/api/v1/users/admin/tokens", {"name": "big", "expiresInDays": TOO_LARGE}),
        (
            "PUT",
            "/api/v1/jobs/big",
            changed(pipeline_manifest("big"), ("spec.runtime.executors", TOO_LARGE)),
        ),
        (
            "PUT",
            "/api/v1/jobs/big",
            changed(pipeline_manifest("big"), ("metadata.resourceVersion", TOO_LARGE)),
        ),
        (
            "PUT",
            "/api/v1/jobs/big",
            changed(pipeline_manifest("big"), ("spec.tags.size", TOO_LARGE)),
        ),
        ("PUT", "/api/v1/connections/big", connection_manifest("big", port=TOO_LARGE)),
    ],
)
def test_integers_in_bodies_past_what_the_store_holds_are_refused(
    server_on_each_store: httpx.Client, method: str, path: str, body: dict[str, object]
) -> None:
    response = server_on_each_store.request(method, path, json=body)
    assert response.status_code == 422, response.text


def test_the_audit_page_bounds_its_offset(browser: Browser) -> None:
    assert browser.client.get("/settings/audit", params={"offset": TOO_LARGE}).status_code == 422
