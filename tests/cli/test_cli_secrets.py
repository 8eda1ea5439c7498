"""Secrets through the CLI: create from a file, standard input or a literal, list without values,
delete, and the server's refusals as exit codes 2 (bad input) and 1 (anything else)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.conftest import RunningServer

VALUE = "cli-secret-value-9d2e"


@pytest.fixture
def name() -> str:
    """A secret name no other test uses, since the server is shared."""
    return f"cli-{uuid.uuid4().hex[:8]}"


def resolved(server: RunningServer, name: str) -> str | None:
    return server.services.secrets.resolve("default", [name]).get(name)


def test_create_from_a_file_then_replace_from_stdin_then_delete(
    cli: CliRunner, running_server: RunningServer, tmp_path: Path, name: str
) -> None:
    source = tmp_path / "value.txt"
    source.write_text(VALUE + "\n")
    created = run(cli, "create", "secret", name, "--bundle", "default", "--from-file", str(source))
    assert created.exit_code == 0, created.output
    assert created.stdout.strip() == f"secret/{name} created in bundle default"
    assert resolved(running_server, name) == VALUE + "\n"

    replaced = run(cli, "create", "secret", name, "--from-file", "-", stdin=VALUE)
    assert replaced.exit_code == 0, replaced.output
    assert replaced.stdout.strip() == f"secret/{name} replaced in bundle default"
    assert resolved(running_server, name) == VALUE

    listed = run(cli, "get", "secrets", "--bundle", "default")
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.stdout.splitlines() if line.startswith(name))
    assert row.split()[:2] == [name, "2"]
    assert "admin" in row
    as_json = json.loads(run(cli, "get", "secrets", "-o", "json").stdout)
    assert name in [item["name"] for item in as_json["items"]]
    for output in (created.output, replaced.output, listed.output, json.dumps(as_json)):
        assert VALUE not in output

    deleted = run(cli, "delete", "secret", name, "--bundle", "default")
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout.strip() == f"secret/{name} deleted from bundle default"
    assert resolved(running_server, name) is None
    again = run(cli, "delete", "secret", name)
    assert again.exit_code == 1
    assert f"secret '{name}' does not exist" in again.stderr


def test_a_literal_value_works_too(
    cli: CliRunner, running_server: RunningServer, name: str
) -> None:
    created = run(cli, "create", "secret", name, "--from-literal", VALUE)
    assert created.exit_code == 0, created.output
    assert resolved(running_server, name) == VALUE


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "exactly one of --from-file or --from-literal"),
        (["--from-literal", "a", "--from-file", "-"], "exactly one of"),
        (["--from-literal", ""], "body.value: must not be empty"),
        (["--from-file", "/no/such/file"], "/no/such/file: cannot be read"),
    ],
)
def test_bad_values_exit_2_with_the_reason(
    cli: CliRunner, name: str, arguments: list[str], message: str
) -> None:
    result = run(cli, "create", "secret", name, *arguments)
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_a_bad_name_exits_2_with_the_servers_message(cli: CliRunner) -> None:
    result = run(cli, "create", "secret", "Not_Valid", "--from-literal", VALUE)
    assert result.exit_code == 2
    assert "path.name: 'Not_Valid' is not a secret name" in result.stderr


def test_a_value_that_is_not_utf8_exits_2(cli: CliRunner, tmp_path: Path, name: str) -> None:
    binary = tmp_path / "key.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    result = run(cli, "create", "secret", name, "--from-file", str(binary))
    assert result.exit_code == 2
    assert "must be UTF-8 text" in result.stderr


def test_an_unknown_bundle_exits_1(cli: CliRunner, name: str) -> None:
    for arguments in (
        ["create", "secret", name, "--bundle", "nope", "--from-literal", VALUE],
        ["get", "secrets", "--bundle", "nope"],
        ["delete", "secret", name, "--bundle", "nope"],
    ):
        result = run(cli, *arguments)
        assert result.exit_code == 1, arguments
        assert "resource bundle 'nope' does not exist" in result.stderr
