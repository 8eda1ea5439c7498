"""Schemathesis against the web form's JSON endpoints (issue 20): they are not in the API's
OpenAPI document, so this describes them (today the pipeline editor's live check,
``POST /jobs/validate-pipeline``) and fuzzes them as a signed-in browser would, with the session
cookie and the CSRF header: no generated request gets a 500 or an answer of another shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.live_server import live_server

CHECK_ANSWER = {
    "description": "The errors found, each with its field path and line",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["errors"],
                "properties": {
                    "errors": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["path", "line", "message"],
                            "properties": {
                                "path": {"type": "string"},
                                "line": {"type": ["integer", "null"]},
                                "message": {"type": "string"},
                            },
                        },
                    }
                },
            }
        }
    },
}
WEB_JSON_ENDPOINTS: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "streamjobs web JSON endpoints", "version": "1"},
    "paths": {
        "/jobs/validate-pipeline": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["yaml"],
                                "properties": {
                                    "yaml": {"type": "string"},
                                    "guarantee": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": CHECK_ANSWER, "422": CHECK_ANSWER},
            }
        }
    },
}


@dataclass(frozen=True)
class SignedInBrowser:
    url: str
    cookies: dict[str, str]
    csrf: str


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignedInBrowser]:
    home: Path = tmp_path_factory.mktemp("schemathesis-web")
    services = open_services(
        Settings(home=home, checkpoint_root="file:///checkpoints"),
        launchers={Deployment.SINGLE_NODE: FakeLauncher()},
    )
    password = services.identity.bootstrap_admin().password
    assert password is not None
    with live_server(services) as url, httpx.Client(base_url=url, timeout=30) as browser:
        signin = browser.post("/signin", data={"user": "admin", "password": password})
        assert signin.status_code == 303, signin.text
        found = re.search(r'<meta name="csrf-token" content="([^"]+)"', browser.get("/jobs").text)
        assert found is not None
        yield SignedInBrowser(url, dict(browser.cookies.items()), found.group(1))
    services.store.close()


def test_the_web_json_endpoints_never_answer_500(signed_in: SignedInBrowser) -> None:
    checked = httpx.post(
        f"{signed_in.url}/jobs/validate-pipeline",
        json={"yaml": "inputs: []"},
        headers={"X-CSRF-Token": signed_in.csrf},
        cookies=signed_in.cookies,
    )
    assert checked.status_code == 200, checked.text
    schema = schemathesis.openapi.from_dict(WEB_JSON_ENDPOINTS)
    tested = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=60,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def fuzz(case: schemathesis.Case) -> None:
            case.call_and_validate(
                base_url=signed_in.url,
                headers={"X-CSRF-Token": signed_in.csrf},
                cookies=signed_in.cookies,
                checks=[not_a_server_error, status_code_conformance, response_schema_conformance],
            )

        fuzz()
        tested.append(operation.label)
    assert tested == ["POST /jobs/validate-pipeline"]
