"""Notification destinations through the CLI against the shared real server: create from flags
(bad flags refused offline at their field), apply by kind (destinations before the jobs that
name them), get, describe with recent deliveries, test (delivered to a real SMTP server, or a
non-zero exit with the reason), delete."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from streamjobs.domain.destinations import destination_manifest
from tests.cli.conftest import run, write
from tests.factories import console_manifest
from tests.notify_receivers import http_receiver, smtp_receiver


@pytest.fixture
def name() -> str:
    """A destination name no other test uses, since the server is shared."""
    return f"cli-{uuid.uuid4().hex[:8]}"


def email_flags(port: int) -> list[str]:
    return [
        "--type=email",
        "--host=127.0.0.1",
        f"--port={port}",
        "--security=none",
        "--from=streamjobs@example.com",
        "--to=ops@example.com",
        "--to=oncall@example.com",
    ]


def test_create_test_describe_and_delete_an_email_destination(cli: CliRunner, name: str) -> None:
    with smtp_receiver() as receiver:
        created = run(cli, "create", "destination", name, *email_flags(receiver.port))
        assert created.exit_code == 0, created.output
        assert created.stdout.strip() == f"destination/{name} created"
        tested = run(cli, "test", "destination", name)
    assert tested.exit_code == 0, tested.output
    assert tested.stdout.strip() == f"destination/{name}: test notification delivered"
    [mail] = receiver.messages
    assert mail.recipients == ["ops@example.com", "oncall@example.com"]
    described = run(cli, "describe", "destination", name)
    assert described.exit_code == 0, described.output
    assert "Type:           email" in described.stdout
    assert f"SMTP server:    127.0.0.1:{receiver.port} (none)" in described.stdout
    assert "To:             ops@example.com, oncall@example.com" in described.stdout
    assert "test (test): delivered after 1 attempt(s)" in described.stdout
    table = run(cli, "get", "destinations", "--type", "email")
    assert table.exit_code == 0, table.output
    [row] = [line.split() for line in table.stdout.splitlines() if line.startswith(name)]
    assert (row[:3], row[-1]) == ([name, "email", "default"], "healthy")
    listed = run(cli, "get", "destinations", "-o", "json")
    names = [item["metadata"]["name"] for item in json.loads(listed.stdout)["items"]]
    assert name in names
    assert run(cli, "delete", "destination", name).stdout.strip() == f"destination/{name} deleted"
    assert run(cli, "get", "destination", name).exit_code == 1


def test_a_failing_test_exits_1_with_the_reason(cli: CliRunner, name: str) -> None:
    created = run(cli, "create", "destination", name, "--type=slack", f"--url-secret=absent-{name}")
    assert created.exit_code == 0, created.output
    tested = run(cli, "test", "destination", name)
    assert tested.exit_code == 1
    assert f"secret 'absent-{name}' (spec.urlSecret) is not in bundle 'default'" in tested.stderr
    described = run(cli, "describe", "destination", name)
    assert "test (test): failed after 1 attempt(s)" in described.stdout
    assert f"secret 'absent-{name}'" in described.stdout


def test_an_unreachable_host_exits_1_saying_it_could_not_connect(cli: CliRunner, name: str) -> None:
    flags = [flag for flag in email_flags(25) if not flag.startswith("--host")]
    run(cli, "create", "destination", name, *flags, "--host=smtp.invalid")
    tested = run(cli, "test", "destination", name)
    assert tested.exit_code == 1
    assert "could not connect to smtp.invalid:25:" in tested.stderr


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--type=pager"], "spec.type: must be 'email', 'webhook' or 'slack'"),
        (["--type=webhook", "--url=ftp://x.example"], "spec.url: 'ftp://x.example' is not an http"),
        (
            ["--type=webhook", "--url=https://x.example", "--header=Authorization=Bearer t"],
            "spec.headers.Authorization: looks like a credential",
        ),
        (["--type=webhook", "--url=https://x.example", "--header=X-Team"], "give it as NAME=VALUE"),
        (["--type=email", "--host=h", "--port=0"], "spec.port: must be greater than or equal to 1"),
    ],
)
def test_bad_flags_exit_2_at_their_field_and_create_nothing(
    cli: CliRunner, name: str, flags: list[str], words: str
) -> None:
    result = run(cli, "create", "destination", name, *flags)
    assert result.exit_code == 2, result.output
    assert words in result.stderr
    assert run(cli, "get", "destination", name).exit_code == 1


def test_apply_sends_destinations_before_the_jobs_that_name_them(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    job = console_manifest(
        f"{name}-job", notifications=[{"destination": name, "events": ["failed"]}]
    )
    with http_receiver() as receiver:
        destination = destination_manifest(
            name,
            {"type": "webhook", "url": receiver.url, "headers": {"X-Team": "payments"}},
        )
        path = write(tmp_path / "all.yaml", job, destination)
        validated = run(cli, "validate", "-f", str(path))
        assert validated.exit_code == 0, validated.output
        assert f"{path}#2: valid (notificationdestination/{name})" in validated.stdout
        applied = run(cli, "apply", "-f", str(path))
        assert applied.exit_code == 0, applied.output
        assert applied.stdout.splitlines() == [
            f"notificationdestination/{name} created",
            f"streamingjob/{name}-job created",
        ]
        tested = run(cli, "test", "destination", name)
        assert (
            tested.stdout.strip() == f"destination/{name}: test notification delivered (HTTP 200)"
        )
    assert receiver.requests[0].headers["x-team"] == "payments"
    printed = yaml.safe_load(run(cli, "get", "destination", name).stdout)
    assert printed["status"]["healthy"] is True
    again = run(cli, "apply", "-f", str(path))
    assert again.stdout.splitlines()[0] == f"notificationdestination/{name} unchanged"
    refused = run(cli, "delete", "destination", name)
    assert refused.exit_code == 1
    assert f"{name}-job" in refused.stderr


def test_a_job_naming_a_missing_destination_is_refused_at_apply(
    cli: CliRunner, tmp_path: Path, name: str
) -> None:
    job = console_manifest(
        f"{name}-job", notifications=[{"destination": name, "events": ["failed"]}]
    )
    result = run(cli, "apply", "-f", str(write(tmp_path / "job.yaml", job)))
    assert result.exit_code == 2, result.output
    assert "spec.notifications[0].destination" in result.stderr
