"""A job may reach only what its bundle allows, over real HTTP: settings, variables and
locations outside it are a 422 naming the field, and a location another job writes (or
checkpoints at) is a 409 naming that job to those who may see it, "another job" to others."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    Principal,
    Subject,
)
from tests.api.problems import problem_of
from tests.conftest import RunningServer
from tests.factories import changed, connection_manifest, pipeline_manifest

JOBS = "/api/v1/jobs"
ADMIN = Actor(Principal("admin", is_admin=True))


@pytest.fixture
def place() -> str:
    """A directory under the default bundle's roots that no other test uses."""
    return f"/tmp/out/{uuid.uuid4().hex[:10]}"


def job(name: str, place: str, *changes: tuple[str, Any]) -> dict[str, Any]:
    """The factory's pipeline job, writing into ``place``, with ``changes``."""
    return changed(
        pipeline_manifest(name), ("spec.pipeline.outputs[0].path", f"{place}/{name}"), *changes
    )


def refused(response: httpx.Response, status: int = 422) -> dict[str, str]:
    """The problem's field errors, by path."""
    return {error["path"]: error["message"] for error in problem_of(response, status)["errors"]}


def create(api: httpx.Client, manifest: dict[str, Any]) -> httpx.Response:
    return api.post(JOBS, json=manifest)


def test_a_variable_that_loads_code_is_refused_at_its_key(
    api: httpx.Client, job_name: str, place: str
) -> None:
    manifest = job(
        job_name,
        place,
        ("spec.configuration", {"env": {"LD_PRELOAD": "/x.so"}, "envSecrets": {"BASH_ENV": "s"}}),
    )
    errors = refused(create(api, manifest))
    assert errors['spec.configuration.env["LD_PRELOAD"]'].startswith("a job may not set LD_PRELOAD")
    assert errors['spec.configuration.envSecrets["BASH_ENV"]'].startswith(
        "a job may not set BASH_ENV"
    )


def test_a_setting_that_sizes_the_driver_names_the_instance_field(
    api: httpx.Client, job_name: str, place: str
) -> None:
    conf = {"spark.master": "local[8]", "spark.driver.memory": "3g", "spark.ui.port": "4040"}
    errors = refused(create(api, job(job_name, place, ("spec.configuration.sparkConf", conf))))
    assert (
        "set spec.instance.deployment instead"
        in errors['spec.configuration.sparkConf["spark.master"]']
    )
    assert (
        "set spec.instance.driver instead"
        in errors['spec.configuration.sparkConf["spark.driver.memory"]']
    )
    assert errors['spec.configuration.sparkConf["spark.ui.port"]'].startswith(
        "spark.ui.port is the server's to set"
    )


def bundle_with(api: httpx.Client, place: str, policy: dict[str, list[str]]) -> str:
    name = f"b-{uuid.uuid4().hex[:10]}"
    created = api.post(
        "/api/v1/bundles", json={"name": name, "dataRoots": [place], "sparkConf": policy}
    )
    assert created.status_code == 201, created.text
    return name


def test_a_restricted_setting_passes_only_where_the_bundle_allows_it(
    api: httpx.Client, job_name: str, place: str
) -> None:
    conf = ("spec.configuration.sparkConf", {"spark.eventLog.dir": f"file://{place}/events"})
    plain = bundle_with(api, place, {})
    errors = refused(create(api, job(job_name, place, ("spec.bundle", plain), conf)))
    assert "is restricted" in errors['spec.configuration.sparkConf["spark.eventLog.dir"]']
    allowing = bundle_with(api, place, {"allowed": ["spark.eventLog.*"]})
    created = create(api, job(job_name, place, ("spec.bundle", allowing), conf))
    assert created.status_code == 201, created.text


def test_a_setting_the_bundle_refuses_is_refused(
    api: httpx.Client, job_name: str, place: str
) -> None:
    bundle = bundle_with(api, place, {"refused": ["spark.sql.shuffle.partitions"]})
    manifest = job(
        job_name,
        place,
        ("spec.bundle", bundle),
        ("spec.configuration.sparkConf", {"spark.sql.shuffle.partitions": "400"}),
    )
    assert refused(create(api, manifest)) == {
        'spec.configuration.sparkConf["spark.sql.shuffle.partitions"]': (
            f"spark.sql.shuffle.partitions is refused by resource bundle {bundle!r} "
            "(spark.sql.shuffle.partitions)"
        )
    }


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (
            ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "text", "path": "/etc"}),
            "spec.pipeline.inputs[0].path",
            "input 'ticks' path file:///etc is outside the data roots of resource bundle 'default'",
        ),
        (
            ("spec.pipeline.outputs[0].path", "/srv/elsewhere"),
            "spec.pipeline.outputs[0].path",
            "output 'evens' path file:///srv/elsewhere is outside the data roots",
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", "/var/tmp/cp"),
            "spec.pipeline.streaming.checkpointLocation",
            "checkpointLocation file:///var/tmp/cp is outside the data roots",
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", "file:///"),
            "spec.pipeline.streaming.checkpointLocation",
            "checkpointLocation is / itself",
        ),
        (
            ("spec.pipeline.steps[0].sequence[0].sql", "SELECT value FROM text.`/etc/shadow`"),
            "spec.pipeline.steps[0].sequence[0].sql",
            "step 'evens' reads text.`/etc/shadow`: file:///etc/shadow is outside the data roots",
        ),
    ],
)
def test_a_location_outside_the_bundles_roots_is_refused_at_its_field(
    api: httpx.Client, job_name: str, place: str, change: tuple[str, Any], field: str, says: str
) -> None:
    errors = refused(create(api, job(job_name, place, change)))
    assert list(errors) == [field]
    assert says in errors[field]


def test_a_checkpoint_under_the_servers_home_is_refused(
    api: httpx.Client, running_server: RunningServer, job_name: str, place: str
) -> None:
    inside = (running_server.home / "checkpoints" / "default" / "victim").as_uri()
    manifest = job(job_name, place, ("spec.pipeline.streaming.checkpointLocation", inside))
    message = refused(create(api, manifest))["spec.pipeline.streaming.checkpointLocation"]
    assert "lies inside the server's own directory (STREAMJOBS_HOME)" in message


def test_a_dataset_through_a_connection_rooted_outside_the_roots_is_refused(
    api: httpx.Client, job_name: str, place: str
) -> None:
    connection = f"c-{uuid.uuid4().hex[:10]}"
    manifest = connection_manifest(connection, "files", root="file:///srv/landing")
    assert api.put(f"/api/v1/connections/{connection}", json=manifest).status_code == 201
    source = {"name": "ticks", "format": "text", "dataset": f"{connection}:in"}
    errors = refused(create(api, job(job_name, place, ("spec.pipeline.inputs[0]", source))))
    assert errors["spec.pipeline.inputs[0].dataset"] == (
        f"input 'ticks' dataset {connection}:in file:///srv/landing/in is outside the data "
        f"roots of resource bundle 'default' ({', '.join(default_roots(api))}); a job's paths, "
        f"datasets and checkpoints must lie under one (connection {connection!r} has root "
        "file:///srv/landing)"
    )


def default_roots(api: httpx.Client) -> list[str]:
    roots: list[str] = api.get("/api/v1/bundles/default").json()["dataRoots"]
    return roots


def test_sql_may_read_a_path_under_the_roots(api: httpx.Client, job_name: str, place: str) -> None:
    sql = f"SELECT value FROM text.`{place}/in` UNION ALL SELECT CAST(value AS STRING) FROM ticks"
    manifest = job(job_name, place, ("spec.pipeline.steps[0].sequence[0].sql", sql))
    assert create(api, manifest).status_code == 201


def test_two_jobs_may_not_share_a_checkpoint(api: httpx.Client, place: str) -> None:
    checkpoint = ("spec.pipeline.streaming.checkpointLocation", f"{place}/checkpoint")
    assert create(api, job("first-" + place[-10:], place, checkpoint)).status_code == 201
    second = create(api, job("second-" + place[-10:], place, checkpoint))
    assert refused(second, 409) == {
        "spec.pipeline.streaming.checkpointLocation": (
            f"file://{place}/checkpoint is the checkpoint of job 'first-{place[-10:]}'; two jobs "
            "may not share a checkpoint or write the same output, nor one inside the other"
        )
    }


def test_two_jobs_may_not_write_one_output_nor_one_inside_the_other(
    api: httpx.Client, place: str
) -> None:
    suffix = place[-10:]
    output = ("spec.pipeline.outputs[0].path", f"{place}/shared")
    assert create(api, job(f"one-{suffix}", place, output)).status_code == 201
    same = refused(create(api, job(f"two-{suffix}", place, output)), 409)
    assert same["spec.pipeline.outputs[0].path"].startswith(
        f"file://{place}/shared is an output of job 'one-{suffix}'"
    )
    inside = ("spec.pipeline.outputs[0].path", f"{place}/shared/part")
    nested = refused(create(api, job(f"two-{suffix}", place, inside)), 409)
    assert "lies inside an output of job" in nested["spec.pipeline.outputs[0].path"]
    around = ("spec.pipeline.streaming.checkpointLocation", place)
    own_output = ("spec.pipeline.outputs[0].path", f"{place}-own")
    holding = refused(create(api, job(f"two-{suffix}", place, around, own_output)), 409)
    assert "holds an output of job" in holding["spec.pipeline.streaming.checkpointLocation"]


def test_a_job_may_not_read_inside_another_jobs_checkpoint(api: httpx.Client, place: str) -> None:
    suffix = place[-10:]
    checkpoint = ("spec.pipeline.streaming.checkpointLocation", f"{place}/cp")
    assert create(api, job(f"owner-{suffix}", place, checkpoint)).status_code == 201
    sql = f"SELECT value FROM text.`{place}/cp/evens/offsets`"
    reader = job(f"reader-{suffix}", place, ("spec.pipeline.steps[0].sequence[0].sql", sql))
    errors = refused(create(api, reader), 409)
    assert errors["spec.pipeline.steps[0].sequence[0].sql"] == (
        f"file://{place}/cp/evens/offsets lies inside the checkpoint of job 'owner-{suffix}'; "
        "a job may not read at, inside or around another job's checkpoint"
    )


def test_changes_and_deletions_keep_the_claims_up_to_date(api: httpx.Client, place: str) -> None:
    suffix = place[-10:]
    first, second = f"a-{suffix}", f"b-{suffix}"
    assert create(api, job(first, place)).status_code == 201
    assert create(api, job(second, place)).status_code == 201
    taking = {
        "spec": {
            "pipeline": {
                "outputs": [{"name": "evens", "format": "parquet", "path": f"{place}/{first}"}]
            }
        }
    }
    headers = {"Content-Type": "application/merge-patch+json"}
    patched = api.patch(f"{JOBS}/{second}", json=taking, headers=headers)
    assert "is an output of job" in refused(patched, 409)["spec.pipeline.outputs[0].path"]
    assert api.put(f"{JOBS}/{first}", json=job(first, place)).status_code == 200
    moved = job(first, place, ("spec.pipeline.outputs[0].path", f"{place}/moved"))
    assert api.put(f"{JOBS}/{first}", json=moved).status_code == 200
    assert api.patch(f"{JOBS}/{second}", json=taking, headers=headers).status_code == 200
    assert api.delete(f"{JOBS}/{second}").status_code == 204
    assert (
        create(
            api, job(f"c-{suffix}", place, ("spec.pipeline.outputs[0].path", f"{place}/{first}"))
        ).status_code
        == 201
    )


def test_a_copy_of_a_job_that_writes_an_output_is_refused(api: httpx.Client, place: str) -> None:
    original = f"orig-{place[-10:]}"
    assert create(api, job(original, place)).status_code == 201
    copy = api.post(f"{JOBS}/{original}/duplicate", json={"name": original + "-copy"})
    assert (
        f"is an output of job {original!r}" in refused(copy, 409)["spec.pipeline.outputs[0].path"]
    )


@pytest.fixture
def outsider(running_server: RunningServer) -> Iterator[tuple[httpx.Client, str]]:
    """A user who may create jobs in a bundle of their own only, signed in; and that bundle."""
    services = running_server.services
    name = f"u-{uuid.uuid4().hex[:10]}"
    bundle = f"own-{name}"
    services.people.create_user(name, actor=ADMIN)
    subject = Subject.parse(f"user:{name}")
    services.people.set_domain_grant(
        subject, DomainPermission.CREATE_JOB, granted=True, actor=ADMIN
    )
    services.bundles.create(bundle, actor=ADMIN, data_roots=["/tmp/out"])
    grants = [BundleGrant(bundle, subject, p) for p in (Permission.VIEW, Permission.UPDATE)]
    services.bundles.set_grants(bundle, grants, actor=ADMIN)
    token = services.identity.issue_token(name, "isolation", actor=ADMIN)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=running_server.url, headers=headers, timeout=30) as client:
        yield client, bundle


def test_a_job_the_user_may_not_see_is_not_named(
    api: httpx.Client, outsider: tuple[httpx.Client, str], place: str
) -> None:
    client, bundle = outsider
    hidden = f"hidden-{place[-10:]}"
    assert (
        create(api, job(hidden, place, ("spec.pipeline.outputs[0].path", f"{place}/x"))).status_code
        == 201
    )
    mine = job(
        f"mine-{place[-10:]}",
        place,
        ("spec.bundle", bundle),
        ("spec.pipeline.outputs[0].path", f"{place}/x"),
    )
    response = create(client, mine)
    errors = refused(response, 409)
    assert errors["spec.pipeline.outputs[0].path"] == (
        f"file://{place}/x is an output of another job; two jobs may not share a checkpoint "
        "or write the same output, nor one inside the other"
    )
    assert hidden not in response.text
    visible = job(f"seen-{place[-10:]}", place, ("spec.bundle", bundle))
    assert create(client, visible).status_code == 201
    again = job(
        f"again-{place[-10:]}",
        place,
        ("spec.bundle", bundle),
        ("spec.pipeline.outputs[0].path", f"{place}/seen-{place[-10:]}"),
    )
    assert (
        f"an output of job 'seen-{place[-10:]}'"
        in refused(create(client, again), 409)["spec.pipeline.outputs[0].path"]
    )
