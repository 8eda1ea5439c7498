"""Connections through the CLI: apply by kind (connections before jobs), get, describe, delete,
and exit codes 2 (bad input) and 1 (any other refusal)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.cli.conftest import run, write
from tests.factories import connection_manifest, dataset_job_manifest, python_manifest


@pytest.fixture
def name() -> str:
    """A connection name no other test uses, since the server is shared."""
    return f"cli-{uuid.uuid4().hex[:8]}"


def test_apply_sends_connections_before_the_jobs_that_use_them(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    job = dataset_job_manifest(f"{name}-job", reads=f"{name}-kafka:orders", writes=f"{name}-lake:o")
    path = write(
        tmp_path / "all.yaml",
        job,
        connection_manifest(f"{name}-kafka", "kafka"),
        connection_manifest(f"{name}-lake", "lakehouse"),
    )
    validated = run(cli, "validate", "-f", str(path))
    assert validated.exit_code == 0, validated.output
    assert validated.stdout.splitlines() == [
        f"{path}#1: valid (streamingjob/{name}-job)",
        f"{path}#2: valid (connection/{name}-kafka)",
        f"{path}#3: valid (connection/{name}-lake)",
    ]
    applied = run(cli, "apply", "-f", str(path))
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines() == [
        f"connection/{name}-kafka created",
        f"connection/{name}-lake created",
        f"streamingjob/{name}-job created",
    ]
    again = run(cli, "apply", "-f", str(path))
    assert again.stdout.splitlines()[0] == f"connection/{name}-kafka unchanged"


def test_an_unknown_kind_exits_2_naming_the_file_and_the_kinds(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    secret = {"apiVersion": "streamjobs.io/v1", "kind": "Secret", "metadata": {"name": "s"}}
    write(tmp_path / "1-connection.yaml", connection_manifest(name))
    write(tmp_path / "2-secret.yaml", secret)
    result = run(cli, "apply", "-f", str(tmp_path))
    assert result.exit_code == 2
    assert "2-secret.yaml: kind: 'Secret' is not a kind streamjobs knows" in result.stderr
    assert "use Connection, NotificationDestination or StreamingJob" in result.stderr
    assert run(cli, "get", "connections", name).exit_code == 1


def test_a_connection_holding_a_secret_value_exits_2_before_anything_is_sent(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    bad = connection_manifest(name, "jdbc", options={"password": "hunter2"})
    result = run(cli, "apply", "-f", str(write(tmp_path / "db.yaml", bad)))
    assert result.exit_code == 2
    assert "db.yaml: spec.options.password: looks like a secret" in result.stderr
    assert run(cli, "get", "connections", name).exit_code == 1


def test_a_job_naming_a_missing_connection_exits_2_with_the_servers_words(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    job = dataset_job_manifest(f"{name}-job", reads=f"{name}:orders")
    result = run(cli, "apply", "-f", str(write(tmp_path / "job.yaml", job)))
    assert result.exit_code == 2
    assert f"spec.pipeline.inputs[0].dataset: connection '{name}' does not exist" in result.stderr


def test_get_describe_and_delete(cli: CliRunner, tmp_path: Path, name: str) -> None:
    manifest = connection_manifest(
        name, "jdbc", user="streamjobs", secretOptions={"password": "db-password"}
    )
    manifest["metadata"]["tags"] = {"team": "analytics"}
    run(cli, "apply", "-f", str(write(tmp_path / "db.yaml", manifest)))

    table = run(cli, "get", "connections", "--search", name)
    assert table.exit_code == 0, table.output
    header, row = table.stdout.splitlines()
    assert header.split() == ["NAME", "NAMESPACE", "TYPE", "TARGET", "TAGS", "UPDATED"]
    assert row.split()[:5] == [
        name,
        "default",
        "jdbc",
        "jdbc:postgresql://127.0.0.1:5432/analytics",
        "team=analytics",
    ]
    listed = json.loads(run(cli, "get", "connections", "--type", "jdbc", "-o", "json").stdout)
    assert name in [item["metadata"]["name"] for item in listed["items"]]
    kafka_only = yaml.safe_load(
        run(cli, "get", "connections", "--type", "kafka", "-o", "yaml").stdout
    )
    assert name not in [item["metadata"]["name"] for item in kafka_only["items"]]
    shown = yaml.safe_load(run(cli, "get", "connection", name).stdout)
    assert shown["spec"]["secretOptions"] == {"password": "db-password"}

    described = run(cli, "describe", "connection", name)
    assert described.exit_code == 0
    assert f"Name:           {name}" in described.stdout
    assert "Type:           jdbc" in described.stdout
    assert "User:           streamjobs" in described.stdout
    assert "  password <- secret db-password" in described.stdout

    assert run(cli, "delete", "connection", name).stdout.strip() == f"connection/{name} deleted"
    gone = run(cli, "describe", "connection", name)
    assert gone.exit_code == 1
    assert "does not exist" in gone.stderr


def test_deleting_a_used_connection_exits_1_naming_the_job(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    job = dataset_job_manifest(f"{name}-job", reads=f"{name}:orders")
    run(cli, "apply", "-f", str(write(tmp_path / "all.yaml", connection_manifest(name), job)))
    refused = run(cli, "delete", "connection", name)
    assert refused.exit_code == 1
    assert f"used by the datasets of job '{name}-job'" in refused.stderr
    assert run(cli, "delete", "job", f"{name}-job").exit_code == 0
    assert run(cli, "delete", "connection", name).exit_code == 0


def test_jobs_and_connections_print_in_their_own_tables(cli: CliRunner, tmp_path: Path) -> None:
    run(cli, "apply", "-f", str(write(tmp_path / "app.yaml", python_manifest("cli-conn-py"))))
    jobs = run(cli, "get", "jobs", "--search", "cli-conn-py")
    assert jobs.stdout.split()[:2] == ["NAME", "NAMESPACE"]
    empty = run(cli, "get", "connections", "--search", "no-such-connection-here")
    assert empty.exit_code == 0
    assert empty.stdout.split() == ["NAME", "NAMESPACE", "TYPE", "TARGET", "TAGS", "UPDATED"]
