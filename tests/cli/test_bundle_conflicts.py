"""The CLI changes a bundle's grants by reading them and putting them back whole; when another
admin changes the bundle in between, the write names the version it read, is refused, and the
CLI starts again from a fresh read, so the other admin's change is kept rather than overwritten."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import httpx
import pytest

from streamjobs.cli.access_commands import Change, _change_bundle_grants
from streamjobs.client import CONFLICT_ATTEMPTS, ClientError, StreamjobsClient
from tests.conftest import RunningServer

BUNDLES = "/api/v1/bundles"


class ChangedAfterReads(httpx.BaseTransport):
    """Real HTTP to the server; after each of the first ``times`` reads of a bundle, someone
    else changes it (``meanwhile``) before the reader's next request."""

    def __init__(self, meanwhile: Callable[[], None], *, times: int) -> None:
        self._real = httpx.HTTPTransport()
        self._meanwhile = meanwhile
        self._times = times
        self.sent: list[tuple[str, int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._real.handle_request(request)
        response.read()
        self.sent.append((request.method, response.status_code))
        if request.method == "GET" and self._times > 0:
            self._times -= 1
            self._meanwhile()
        return response


@pytest.fixture
def bundle(api: httpx.Client) -> str:
    name = f"b-{uuid.uuid4().hex[:10]}"
    assert api.post(BUNDLES, json={"name": name}).status_code == 201
    return name


def client_with(server: RunningServer, transport: httpx.BaseTransport) -> StreamjobsClient:
    return StreamjobsClient(server.url, server.admin_token, transport=transport)


def test_a_grant_made_meanwhile_is_kept(
    running_server: RunningServer, api: httpx.Client, bundle: str
) -> None:
    def another_admin_grants_view() -> None:
        views = [{"subject": "user:admin", "permissions": ["VIEW"]}]
        assert api.put(f"{BUNDLES}/{bundle}/grants", json={"grants": views}).status_code == 200

    transport = ChangedAfterReads(another_admin_grants_view, times=1)
    with client_with(running_server, transport) as client:
        said = _change_bundle_grants(
            client, Change("user:admin", ("RUN",), bundle=bundle), granted=True
        )

    assert said == f"granted RUN on bundle/{bundle} to user:admin"
    assert transport.sent == [("GET", 200), ("PUT", 409), ("GET", 200), ("PUT", 200)]
    grants = api.get(f"{BUNDLES}/{bundle}").json()["grants"]
    assert grants == [{"subject": "user:admin", "permissions": ["RUN", "VIEW"]}]


def test_a_bundle_that_keeps_changing_gives_up_with_the_conflict(
    running_server: RunningServer, api: httpx.Client, bundle: str
) -> None:
    def another_admin_sets_quotas() -> None:
        assert api.put(f"{BUNDLES}/{bundle}", json={"description": "theirs"}).status_code == 200

    transport = ChangedAfterReads(another_admin_sets_quotas, times=CONFLICT_ATTEMPTS)
    with client_with(running_server, transport) as client, pytest.raises(ClientError) as refused:
        _change_bundle_grants(client, Change("user:admin", ("RUN",), bundle=bundle), granted=True)

    assert refused.value.status == 409
    assert "changed by someone else" in str(refused.value)
    assert [method for method, _ in transport.sent].count("PUT") == CONFLICT_ATTEMPTS
    assert api.get(f"{BUNDLES}/{bundle}").json()["grants"] == []
