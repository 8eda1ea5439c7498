"""Runs that cannot succeed are refused at Run (issue 21, item 3): a secret the job's bundle
lacks, a connection or a node type that is gone is a 409 naming the field, and no application
is stored, rather than a submission that fails and retries."""

from __future__ import annotations

import uuid

import httpx

from tests.api.problems import problem_of
from tests.conftest import RunningServer
from tests.factories import changed, connection_manifest, dataset_job_manifest, python_manifest

JOBS = "/api/v1/jobs"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def applications_of(api: httpx.Client, job: str) -> list[dict[str, object]]:
    answer = api.get(f"{JOBS}/{job}/applications")
    assert answer.status_code == 200, answer.text
    items: list[dict[str, object]] = answer.json()["items"]
    return items


def put_job(api: httpx.Client, manifest: dict[str, object]) -> None:
    answer = api.put(f"{JOBS}/{manifest['metadata']['name']}", json=manifest)  # type: ignore[index]
    assert answer.status_code == 201, answer.text


def test_a_secret_the_bundle_lacks_is_refused_at_run_naming_the_field(
    api: httpx.Client, job_name: str
) -> None:
    secret = unique("api-key")
    put_job(
        api,
        changed(python_manifest(job_name), ("spec.configuration.envSecrets", {"API_KEY": secret})),
    )
    refused = problem_of(api.post(f"{JOBS}/{job_name}/run"), 409)
    assert refused["detail"].startswith(f"job '{job_name}' cannot run: ")
    assert f"secret '{secret}' does not exist in resource bundle 'default'" in refused["detail"]
    assert f"streamjobs create secret {secret} --bundle default" in refused["detail"]
    assert [error["path"] for error in refused["errors"]] == [
        "spec.configuration.envSecrets.API_KEY"
    ]
    assert applications_of(api, job_name) == []

    created = api.put(f"/api/v1/bundles/default/secrets/{secret}", json={"value": "s3cret"})
    assert created.status_code in (200, 201), created.text
    assert api.post(f"{JOBS}/{job_name}/run").status_code == 201


def test_every_missing_secret_is_named_at_once(api: httpx.Client, job_name: str) -> None:
    env, conf = unique("env"), unique("conf")
    put_job(
        api,
        changed(
            python_manifest(job_name),
            ("spec.configuration.envSecrets", {"TOKEN": env}),
            ("spec.configuration.sparkConfSecrets", {"spark.ssl.keyPassword": conf}),
        ),
    )
    refused = problem_of(api.post(f"{JOBS}/{job_name}/run"), 409)
    assert "2 problems" in refused["detail"]
    assert [error["path"] for error in refused["errors"]] == [
        "spec.configuration.envSecrets.TOKEN",
        'spec.configuration.sparkConfSecrets["spark.ssl.keyPassword"]',
    ]


def test_a_secret_of_a_connection_the_job_uses_is_checked_too(
    api: httpx.Client, job_name: str
) -> None:
    connection, secret = unique("kafka"), unique("jaas")
    manifest = connection_manifest(connection, secretOptions={"kafka.sasl.jaas.config": secret})
    assert api.put(f"/api/v1/connections/{connection}", json=manifest).status_code == 201
    put_job(api, dataset_job_manifest(job_name, reads=f"{connection}:orders"))
    refused = problem_of(api.post(f"{JOBS}/{job_name}/run"), 409)
    assert [error["path"] for error in refused["errors"]] == [
        f'connection {connection!r} spec.secretOptions["kafka.sasl.jaas.config"]'
    ]


def test_a_connection_gone_since_the_job_was_written_is_refused_at_run(
    api: httpx.Client, running_server: RunningServer, job_name: str
) -> None:
    connection = unique("kafka")
    assert (
        api.put(
            f"/api/v1/connections/{connection}", json=connection_manifest(connection)
        ).status_code
        == 201
    )
    put_job(api, dataset_job_manifest(job_name, reads=f"{connection}:orders"))
    with running_server.services.store.transaction() as repos:  # the API refuses to
        repos.connections.delete(connection)
    refused = problem_of(api.post(f"{JOBS}/{job_name}/run"), 409)
    assert refused["errors"][0]["path"] == "spec.pipeline.inputs[0].dataset"
    assert f"connection {connection!r} does not exist" in refused["errors"][0]["message"]
    assert applications_of(api, job_name) == []


def test_a_node_type_gone_since_the_job_was_written_is_refused_at_run(
    api: httpx.Client, running_server: RunningServer, job_name: str
) -> None:
    node_type = unique("tiny")
    created = api.put(f"/api/v1/node-types/{node_type}", json={"cores": 1, "memoryMb": 512})
    assert created.status_code in (200, 201), created.text
    put_job(api, changed(python_manifest(job_name), ("spec.instance", {"driver": node_type})))
    with running_server.services.store.transaction() as repos:  # the API refuses to
        repos.node_types.delete(node_type)
    refused = problem_of(api.post(f"{JOBS}/{job_name}/run"), 409)
    assert refused["errors"][0]["path"] == "spec.instance.driver"
    assert f"node type {node_type!r} does not exist" in refused["errors"][0]["message"]


def test_resume_refuses_what_run_refuses(
    api: httpx.Client, running_server: RunningServer, job_name: str
) -> None:
    """A suspended application resumed after its job gained a secret its bundle lacks."""
    put_job(api, python_manifest(job_name))
    assert api.post(f"{JOBS}/{job_name}/run").status_code == 201
    with running_server.services.store.transaction() as repos:
        live = repos.applications.live_for_job(job_name)
        assert live is not None
        repos.applications.update(
            live.id, version=live.version, at=live.created_at, state="SUSPENDED"
        )
    secret = unique("late")
    manifest = changed(
        python_manifest(job_name), ("spec.configuration.envSecrets", {"LATE": secret})
    )
    assert api.put(f"{JOBS}/{job_name}", json=manifest).status_code == 200
    refused = problem_of(api.post(f"{JOBS}/{job_name}/resume"), 409)
    assert refused["errors"][0]["path"] == "spec.configuration.envSecrets.LATE"
