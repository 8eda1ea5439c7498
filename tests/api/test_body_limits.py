"""Every request body is bounded before it is read (issue 20, item 2): a body past its route's
limit is refused with 413 whether its Content-Length announces it or it streams in chunks, whoever
reads it (a manifest route, a FastAPI model route, a web form); an /api write without credentials
gets 401 without being read; each family of routes has its own limit."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.api.problems import problem_of
from tests.factories import pipeline_manifest
from tests.staged_server import Stage, stage

__all__ = ["stage"]

MIB = 1024 * 1024


def chunks(size: int, piece: bytes = b" ") -> Iterator[bytes]:
    """``size`` bytes in 64 KiB chunks: sent without a Content-Length."""
    for _ in range(size // 65536):
        yield piece * 65536


def test_a_body_announced_past_the_limit_is_refused_unread(api: httpx.Client) -> None:
    response = api.post(
        "/api/v1/jobs", content=b"{" * (MIB + 1), headers={"Content-Type": "application/json"}
    )
    problem = problem_of(response, 413)
    assert problem["instance"] == "/api/v1/jobs"
    assert problem["errors"] == [
        {"path": "body", "message": "larger than 1048576 bytes (max_body_bytes)"}
    ]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/jobs"),
        ("PUT", "/api/v1/connections/streamed"),
        ("POST", "/api/v1/bundles"),  # a body FastAPI reads into a model
        ("PUT", "/api/v1/node-types/streamed"),
    ],
)
def test_a_streamed_body_past_the_limit_is_refused(
    api: httpx.Client, method: str, path: str
) -> None:
    response = api.request(
        method, path, content=chunks(2 * MIB), headers={"Content-Type": "application/json"}
    )
    assert "max_body_bytes" in problem_of(response, 413)["errors"][0]["message"]


def test_a_body_at_the_limit_is_read(api: httpx.Client) -> None:
    document = b'{"padding": "' + b" " * (MIB - 20) + b'"}'
    assert len(document) <= MIB
    response = api.post("/api/v1/jobs", content=document)
    assert response.status_code == 422, response.text
    assert "max_body_bytes" not in response.text


def test_each_family_of_routes_has_its_own_limit(
    api: httpx.Client, anonymous: httpx.Client
) -> None:
    form_sized = b"user=x&password=y&padding=" + b"z" * (MIB + MIB // 2)
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    signin = anonymous.post("/signin", content=form_sized, headers=form_type)
    assert signin.status_code != 413, signin.text

    fields = (b"field=" + b"z" * 65529 + b"&" for _ in range(48))  # 3 MiB in fields of 64 KiB
    too_big_for_a_form = anonymous.post("/signin", content=fields, headers=form_type)
    assert "max_form_body_bytes" in problem_of(too_big_for_a_form, 413)["errors"][0]["message"]

    check = anonymous.post(
        "/jobs/validate-pipeline",
        content=b"{" * (256 * 1024 + 1),
        headers={"Content-Type": "application/json"},
    )
    assert "max_pipeline_check_body_bytes" in problem_of(check, 413)["errors"][0]["message"]


def test_an_api_write_without_credentials_is_refused_before_its_body_is_read(
    anonymous: httpx.Client,
) -> None:
    response = anonymous.put("/api/v1/jobs/anything", content=chunks(512 * 1024))
    problem_of(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"
    assert anonymous.get("/healthz").status_code == 200


def test_a_report_is_read_only_with_its_applications_token(stage: Stage) -> None:
    started = stage.api.post("/api/v1/jobs/ticks/run")
    assert started.status_code == 201, started.text
    application_id = started.json()["id"]
    stage.tick()
    url = f"{stage.url}/api/v1/applications/{application_id}/reports"

    someone_elses = httpx.post(
        url, content=chunks(4 * MIB), headers={"Authorization": f"Bearer {stage.token}"}
    )
    assert "does not belong" in problem_of(someone_elses, 401)["detail"]

    driver = {"Authorization": f"Bearer {stage.launcher.drivers[-1].attempt.report_token}"}
    too_big = httpx.post(url, content=chunks(2 * MIB), headers=driver)
    message = problem_of(too_big, 413)["errors"][0]["message"]
    assert message == "larger than 1048576 bytes (max_report_body_bytes)"

    deep = httpx.post(url, content=b'{"events": ' + b"[" * 100 + b"]" * 100 + b"}", headers=driver)
    assert "64 levels" in problem_of(deep, 422)["detail"]
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success


def test_jobs_still_apply_after_refused_bodies(api: httpx.Client, job_name: str) -> None:
    api.post("/api/v1/jobs", content=chunks(2 * MIB))
    created = api.post("/api/v1/jobs", json=pipeline_manifest(job_name))
    assert created.status_code == 201, created.text
    api.delete(f"/api/v1/jobs/{job_name}")
