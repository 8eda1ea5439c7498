"""Schemathesis against the served ``/api/v1/openapi.json``: with a valid token no generated
request gets a 500 or an answer that breaks the documented schema; without one, every request
gets a 401.

The server runs over a fake launcher (no Spark) and its own store, so whatever the generated
requests create, run or delete stays there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.live_server import live_server


@dataclass(frozen=True)
class FuzzedServer:
    url: str
    token: str


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzedServer]:
    home: Path = tmp_path_factory.mktemp("schemathesis")
    services = open_services(
        Settings(home=home, checkpoint_root="file:///checkpoints"),
        launchers={Deployment.SINGLE_NODE: FakeLauncher()},
    )
    token = services.identity.bootstrap_admin().token
    assert token is not None
    with live_server(services) as url:
        yield FuzzedServer(url=url, token=token)
    services.store.close()


@pytest.fixture(scope="module")
def api_schema(fuzzed_server: FuzzedServer) -> schemathesis.BaseSchema:
    headers = {"Authorization": f"Bearer {fuzzed_server.token}"}
    return schemathesis.openapi.from_url(
        f"{fuzzed_server.url}/api/v1/openapi.json", headers=headers
    )


FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def operations(api_schema: schemathesis.BaseSchema) -> list[schemathesis.APIOperation]:
    return [result.ok() for result in api_schema.get_all_operations()]


def test_no_500_and_answers_fit_the_schema(
    api_schema: schemathesis.BaseSchema, fuzzed_server: FuzzedServer
) -> None:
    headers = {"Authorization": f"Bearer {fuzzed_server.token}"}
    tested = []
    for operation in operations(api_schema):

        @FUZZ
        @given(case=operation.as_strategy())
        def fuzz(case: schemathesis.Case) -> None:
            case.call_and_validate(
                headers=headers, checks=[not_a_server_error, response_schema_conformance]
            )

        fuzz()
        tested.append(operation.label)
    assert len(tested) >= 60


def test_without_a_token_every_request_is_401(api_schema: schemathesis.BaseSchema) -> None:
    for operation in operations(api_schema):

        @FUZZ
        @given(case=operation.as_strategy())
        def fuzz(case: schemathesis.Case) -> None:
            response = case.call()
            expected = 200 if case.operation.path == "/healthz" else 401
            assert response.status_code == expected, (
                case.method,
                case.formatted_path,
                response.text,
            )

        fuzz()
