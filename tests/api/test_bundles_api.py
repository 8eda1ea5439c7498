"""/api/v1/bundles over real HTTP: a bundle's quotas and grants change only from the version the
client read (``ETag`` / ``If-Match``), so two admins editing one bundle cannot overwrite each
other unseen, and a refused change writes nothing."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.api.problems import error_paths, problem_of

BUNDLES = "/api/v1/bundles"
QUOTA = {"maxRunningApplications": None, "maxCores": None, "maxMemoryMb": None}
ADMIN_VIEWS = [{"subject": "user:admin", "permissions": ["VIEW"]}]


@pytest.fixture
def bundle(api: httpx.Client) -> str:
    """A bundle no other test uses, since the server is shared."""
    name = f"b-{uuid.uuid4().hex[:10]}"
    created = api.post(BUNDLES, json={"name": name})
    assert created.status_code == 201, created.text
    return name


def test_a_bundle_carries_its_version(api: httpx.Client, bundle: str) -> None:
    got = api.get(f"{BUNDLES}/{bundle}")

    assert got.headers["etag"] == '"1"'
    assert got.json()["resourceVersion"] == "1"


def test_quotas_change_only_from_the_version_read(api: httpx.Client, bundle: str) -> None:
    first = {"description": "first", "quota": {**QUOTA, "maxCores": 4}}
    second = {"description": "second", "quota": {**QUOTA, "maxCores": 8}}

    saved = api.put(f"{BUNDLES}/{bundle}", json=first, headers={"If-Match": '"1"'})
    stale = api.put(f"{BUNDLES}/{bundle}", json=second, headers={"If-Match": '"1"'})

    assert saved.status_code == 200, saved.text
    assert saved.headers["etag"] == '"2"'
    assert "version 1" in problem_of(stale, 409)["detail"]
    kept = api.get(f"{BUNDLES}/{bundle}").json()
    assert (kept["description"], kept["quota"]["maxCores"], kept["resourceVersion"]) == (
        "first",
        4,
        "2",
    )


def test_grants_are_part_of_the_version(api: httpx.Client, bundle: str) -> None:
    granted = api.put(
        f"{BUNDLES}/{bundle}/grants", json={"grants": ADMIN_VIEWS}, headers={"If-Match": '"1"'}
    )
    stale_quota = api.put(
        f"{BUNDLES}/{bundle}", json={"quota": {**QUOTA, "maxCores": 2}}, headers={"If-Match": '"1"'}
    )
    stale_grants = api.put(
        f"{BUNDLES}/{bundle}/grants", json={"grants": []}, headers={"If-Match": 'W/"1"'}
    )

    assert granted.status_code == 200, granted.text
    assert granted.headers["etag"] == '"2"'
    problem_of(stale_quota, 409)
    problem_of(stale_grants, 409)
    kept = api.get(f"{BUNDLES}/{bundle}").json()
    assert kept["grants"] == ADMIN_VIEWS
    assert kept["quota"]["maxCores"] is None


def test_a_change_without_if_match_still_moves_the_version(api: httpx.Client, bundle: str) -> None:
    assert api.put(f"{BUNDLES}/{bundle}/grants", json={"grants": []}).headers["etag"] == '"2"'
    assert api.put(f"{BUNDLES}/{bundle}", json={}).headers["etag"] == '"3"'

    stale = api.put(f"{BUNDLES}/{bundle}/grants", json={"grants": []}, headers={"If-Match": '"2"'})

    problem_of(stale, 409)


def test_delete_only_from_the_version_read(api: httpx.Client, bundle: str) -> None:
    assert api.put(f"{BUNDLES}/{bundle}", json={}).status_code == 200

    problem_of(api.delete(f"{BUNDLES}/{bundle}", headers={"If-Match": '"1"'}), 409)
    assert api.delete(f"{BUNDLES}/{bundle}", headers={"If-Match": '"2"'}).status_code == 204
    problem_of(api.get(f"{BUNDLES}/{bundle}"), 404)


@pytest.mark.parametrize("if_match", ["soon", '"²"', '"99999999999"'])
@pytest.mark.parametrize("method", ["PUT", "PUT grants", "DELETE"])
def test_an_if_match_that_names_no_version_is_refused(
    api: httpx.Client, bundle: str, method: str, if_match: str
) -> None:
    verb, _, suffix = method.partition(" ")
    body = {"grants": []} if suffix else {}
    url = f"{BUNDLES}/{bundle}" + (f"/{suffix}" if suffix else "")
    answer = api.request(
        verb, url, json=None if verb == "DELETE" else body, headers={"If-Match": if_match.encode()}
    )

    assert error_paths(answer) == ["header.If-Match"]
    assert api.get(f"{BUNDLES}/{bundle}").json()["resourceVersion"] == "1"
