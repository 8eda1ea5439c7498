"""/api/v1/bundles over real HTTP: a bundle's quotas, data roots, Spark setting policy and grants
change only from the version the client read (``ETag`` / ``If-Match``), so two admins editing one
bundle cannot overwrite each other unseen, bad values are a 422 naming the field, and a refused
change writes nothing."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    Permission,
    Principal,
    Subject,
    SubjectKind,
)
from tests.api.problems import error_paths, problem_of
from tests.conftest import RunningServer

BUNDLES = "/api/v1/bundles"
QUOTA = {"maxRunningApplications": None, "maxCores": None, "maxMemoryMb": None}
ADMIN_VIEWS = [{"subject": "user:admin", "permissions": ["VIEW"]}]
ADMIN = Actor(Principal("admin", is_admin=True))


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


def test_data_roots_and_spark_policy_are_created_shown_and_replaced(api: httpx.Client) -> None:
    name = f"b-{uuid.uuid4().hex[:10]}"
    policy = {"allowed": ["spark.jars.repositories"], "refused": ["spark.sql.catalog.*"]}
    created = api.post(
        BUNDLES,
        json={"name": name, "dataRoots": ["/data/pay/", "s3a://Lake/pay"], "sparkConf": policy},
    )
    assert created.status_code == 201, created.text
    assert created.json()["dataRoots"] == ["file:///data/pay", "s3a://lake/pay"]
    assert created.json()["sparkConf"] == policy
    listed = [b for b in api.get(BUNDLES).json()["items"] if b["name"] == name]
    assert listed[0]["dataRoots"] == ["file:///data/pay", "s3a://lake/pay"]

    replaced = api.put(
        f"{BUNDLES}/{name}",
        json={"dataRoots": ["file:///data/other"], "sparkConf": {"refused": ["spark.sql.*"]}},
        headers={"If-Match": '"1"'},
    )

    assert replaced.status_code == 200, replaced.text
    assert replaced.headers["etag"] == '"2"'
    document = api.get(f"{BUNDLES}/{name}").json()
    assert document["dataRoots"] == ["file:///data/other"]
    assert document["sparkConf"] == {"allowed": [], "refused": ["spark.sql.*"]}


def test_a_put_without_the_policy_leaves_no_roots_and_no_exceptions(
    api: httpx.Client, bundle: str
) -> None:
    body = {"dataRoots": ["/data/pay"], "sparkConf": {"allowed": ["spark.jars.repositories"]}}
    assert api.put(f"{BUNDLES}/{bundle}", json=body).status_code == 200

    quotas_only = api.put(f"{BUNDLES}/{bundle}", json={"quota": {**QUOTA, "maxCores": 2}})

    assert quotas_only.status_code == 200, quotas_only.text
    assert quotas_only.json()["dataRoots"] == []
    assert quotas_only.json()["sparkConf"] == {"allowed": [], "refused": []}


def test_a_stale_policy_change_is_refused_and_writes_nothing(
    api: httpx.Client, bundle: str
) -> None:
    assert api.put(f"{BUNDLES}/{bundle}", json={"dataRoots": ["/data/a"]}).status_code == 200

    stale = api.put(
        f"{BUNDLES}/{bundle}", json={"dataRoots": ["/data/b"]}, headers={"If-Match": '"1"'}
    )

    problem_of(stale, 409)
    assert api.get(f"{BUNDLES}/{bundle}").json()["dataRoots"] == ["file:///data/a"]


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        ({"dataRoots": ["/data/ok", "relative/path"]}, ["dataRoots[1]"]),
        ({"dataRoots": ["/"]}, ["dataRoots[0]"]),
        ({"dataRoots": ["HOME/store"]}, ["dataRoots[0]"]),
        ({"dataRoots": ["/data/a", "file:///data/a/"]}, ["dataRoots[1]"]),
        ({"sparkConf": {"allowed": ["spark.ok", "hadoop.x"]}}, ["sparkConf.allowed[1]"]),
        ({"sparkConf": {"refused": ["spark.a.*.b"]}}, ["sparkConf.refused[0]"]),
        ({"sparkConf": {"allowed": ["spark.a"], "refused": ["spark.a"]}}, ["sparkConf.refused[0]"]),
        ({"dataRoots": "/data"}, ["body.dataRoots"]),
        ({"sparkConf": {"allowed": [], "other": []}}, ["body.sparkConf.other"]),
    ],
)
@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_a_bad_policy_is_a_422_naming_the_field(
    api: httpx.Client,
    running_server: RunningServer,
    bundle: str,
    method: str,
    body: dict[str, Any],
    paths: list[str],
) -> None:
    home = str(running_server.home)
    body = json.loads(json.dumps(body).replace("HOME", home))
    if method == "POST":
        answer = api.post(BUNDLES, json={"name": f"{bundle}-new", **body})
    else:
        answer = api.put(f"{BUNDLES}/{bundle}", json=body)

    assert error_paths(answer) == paths
    assert api.get(f"{BUNDLES}/{bundle}").json()["resourceVersion"] == "1"
    problem_of(api.get(f"{BUNDLES}/{bundle}-new"), 404)


def test_only_those_who_manage_bundles_change_the_policy(
    api: httpx.Client, running_server: RunningServer, anonymous: httpx.Client, bundle: str
) -> None:
    services = running_server.services
    user = f"u-{uuid.uuid4().hex[:8]}"
    services.people.create_user(user, actor=ADMIN)
    grants = [BundleGrant(bundle, Subject(SubjectKind.USER, user), Permission.UPDATE)]
    services.bundles.set_grants(bundle, grants, actor=ADMIN)
    token = services.identity.issue_token(user, "t", actor=ADMIN)
    headers = {"Authorization": f"Bearer {token}"}

    seen = anonymous.get(f"{BUNDLES}/{bundle}", headers=headers)
    changed = anonymous.put(f"{BUNDLES}/{bundle}", json={"dataRoots": ["/"]}, headers=headers)
    created = anonymous.post(BUNDLES, json={"name": f"{bundle}-x"}, headers=headers)

    assert seen.status_code == 200
    assert (seen.json()["dataRoots"], seen.json()["sparkConf"]["allowed"]) == ([], [])
    problem_of(changed, 403)
    problem_of(created, 403)
    assert api.get(f"{BUNDLES}/{bundle}").json()["resourceVersion"] == "2"
