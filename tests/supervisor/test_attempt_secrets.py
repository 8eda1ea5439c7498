"""Secrets at launch: resolved from the job's own bundle for envSecrets, sparkConfSecrets and the
secret options of its connections; a missing one fails the submission, naming where it was
needed."""

from __future__ import annotations

from tests.factories import changed, connection_manifest, dataset_job_manifest
from tests.supervisor.conftest import ALICE, World


def run_once(world: World, name: str) -> str:
    application = world.services.applications.run(name, actor=ALICE)
    world.tick()
    return application.id


def test_every_kind_of_secret_reaches_the_attempt_from_the_jobs_bundle(world: World) -> None:
    services = world.services
    with services.store.transaction() as repos:
        repos.bundles.add("payments", world.clock.now(), data_roots=["file:///tmp/out"])
    for bundle in ("default", "payments"):
        services.secrets.put(bundle, "api-key", f"{bundle}-api", actor=ALICE)
        services.secrets.put(bundle, "ssl-password", f"{bundle}-ssl", actor=ALICE)
        services.secrets.put(bundle, "kafka-jaas", f"{bundle}-jaas", actor=ALICE)
    services.connections.create(
        connection_manifest("kafka-main", secretOptions={"kafka.sasl.jaas.config": "kafka-jaas"}),
        actor=ALICE,
    )
    job = changed(
        dataset_job_manifest("orders", reads="kafka-main:orders"),
        ("spec.bundle", "payments"),
        (
            "spec.configuration",
            {
                "envSecrets": {"API_KEY": "api-key"},
                "sparkConfSecrets": {"spark.ssl.keyPassword": "ssl-password"},
            },
        ),
    )
    services.jobs.create(job, actor=ALICE)
    run_once(world, "orders")
    attempt = world.launcher.drivers[-1].attempt
    assert attempt.secrets == {
        "API_KEY": "payments-api",
        "STREAMJOBS_SECRET_KAFKA_JAAS": "payments-jaas",
    }
    assert attempt.spark_conf_secrets == {"spark.ssl.keyPassword": "payments-ssl"}


def test_a_secret_deleted_after_the_run_fails_the_submission_naming_the_field(
    world: World,
) -> None:
    """Run refuses a job whose secrets are missing (``services.run_checks``); one deleted
    between the Run and the launch fails the submission."""
    world.create_job(
        "needs-secrets",
        configuration={
            "envSecrets": {"API_KEY": "api-key", "DB_PASSWORD": "db-password"},
            "sparkConfSecrets": {"spark.ssl.keyPassword": "ssl-password"},
        },
    )
    for name in ("db-password", "ssl-password"):
        world.services.secrets.put("default", name, "soon gone", actor=ALICE)
    application_id = world.services.applications.run("needs-secrets", actor=ALICE).id
    for name in ("db-password", "ssl-password"):
        world.services.secrets.delete("default", name, actor=ALICE)
    world.tick()
    world.tick()
    message = world.failed_submission(application_id)
    assert "spec.configuration.envSecrets.DB_PASSWORD: secret 'db-password'" in message
    assert 'spec.configuration.sparkConfSecrets["spark.ssl.keyPassword"]: secret ' in message
    assert "do not exist in resource bundle 'default'" in message
    assert "API_KEY" not in message
    assert "s3cret" not in message
