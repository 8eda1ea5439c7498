"""The CLI against a real server: kubectl-like verbs, outputs, and exit codes 2 and 1."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from streamjobs.launch.ports import free_loopback_port
from tests.cli.conftest import run, write
from tests.conftest import RunningServer
from tests.factories import pipeline_manifest, python_manifest

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_validate_works_offline(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMJOBS_SERVER", f"http://127.0.0.1:{free_loopback_port()}")
    result = run(cli, "validate", "-f", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    assert "valid" in result.stdout


def test_validate_reports_the_field_path_and_exits_2(cli: CliRunner, tmp_path: Path) -> None:
    bad = pipeline_manifest("bad", restartPolicy={"type": "OnFailure", "onFailureRetryInterval": 0})
    result = run(cli, "validate", "-f", str(write(tmp_path / "bad.yaml", bad)))
    assert result.exit_code == 2
    assert "spec.restartPolicy.onFailureRetryInterval" in result.stderr
    assert "bad.yaml" in result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [("metadata: [unclosed\n", "line"), (None, "no such file")],
)
def test_unreadable_input_exits_2(
    cli: CliRunner, tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "manifest.yaml"
    if content is not None:
        path.write_text(content)
    result = run(cli, "apply", "-f", str(path))
    assert result.exit_code == 2
    assert expected in result.stderr


def test_apply_get_describe_delete(cli: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "job.yaml", pipeline_manifest("cli-tour"))
    assert run(cli, "apply", "-f", str(path)).stdout.strip() == "streamingjob/cli-tour created"
    assert run(cli, "apply", "-f", str(path)).stdout.strip() == "streamingjob/cli-tour unchanged"

    table = run(cli, "get", "jobs", "--search", "cli-tour")
    assert table.exit_code == 0
    header, row = table.stdout.splitlines()[:2]
    assert header.split()[:5] == ["NAME", "NAMESPACE", "BUNDLE", "TYPE", "STATUS"]
    assert row.split()[:5] == ["cli-tour", "default", "default", "pipeline", "Idle"]

    listed = json.loads(run(cli, "get", "jobs", "--search", "cli-tour", "-o", "json").stdout)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["cli-tour"]
    shown = yaml.safe_load(run(cli, "get", "job", "cli-tour").stdout)
    assert shown["spec"]["pipeline"]["outputs"][0]["format"] == "parquet"

    described = run(cli, "describe", "job", "cli-tour")
    assert described.exit_code == 0
    assert "Name:           cli-tour" in described.stdout
    assert "Output:       evens -> /tmp/out/cli-tour/evens (parquet)" in described.stdout

    assert run(cli, "delete", "job", "cli-tour").stdout.strip() == "streamingjob/cli-tour deleted"
    gone = run(cli, "describe", "job", "cli-tour")
    assert gone.exit_code == 1
    assert "does not exist" in gone.stderr


def test_apply_a_directory_and_stdin(cli: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", pipeline_manifest("cli-dir-a"), python_manifest("cli-dir-b"))
    result = run(cli, "apply", "-f", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "streamingjob/cli-dir-a created",
        "streamingjob/cli-dir-b created",
    ]
    piped = run(cli, "apply", "-f", "-", stdin=yaml.safe_dump(python_manifest("cli-stdin")))
    assert piped.stdout.strip() == "streamingjob/cli-stdin created"


def test_one_bad_manifest_applies_nothing(cli: CliRunner, tmp_path: Path) -> None:
    broken = python_manifest("cli-broken")
    broken["spec"]["application"]["type"] = "scala"
    write(tmp_path / "1-good.yaml", python_manifest("cli-good"))
    write(tmp_path / "2-bad.yaml", broken)
    result = run(cli, "apply", "-f", str(tmp_path))
    assert result.exit_code == 2
    assert "2-bad.yaml: spec.application.type" in result.stderr
    assert run(cli, "get", "jobs", "cli-good").exit_code == 1


def test_a_refusal_by_the_server_exits_2_with_its_words(cli: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "job.yaml", pipeline_manifest("cli-bundle", bundle="nobody"))
    result = run(cli, "apply", "-f", str(path))
    assert result.exit_code == 2
    assert "spec.bundle: resource bundle 'nobody' does not exist" in result.stderr


def test_an_unreachable_server_exits_1(cli: CliRunner) -> None:
    result = run(cli, "--server", f"http://127.0.0.1:{free_loopback_port()}", "get", "jobs")
    assert result.exit_code == 1
    assert "cannot reach the server" in result.stderr


def test_a_bad_token_exits_1(cli: CliRunner) -> None:
    result = run(cli, "--token", "sj_wrong", "get", "jobs")
    assert result.exit_code == 1
    assert "not valid" in result.stderr


def test_login_checks_and_saves_with_mode_600(
    cli: CliRunner, running_server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STREAMJOBS_SERVER")
    monkeypatch.delenv("STREAMJOBS_TOKEN")
    refused = run(cli, "login", "--server", running_server.url, "--token", "sj_wrong")
    assert refused.exit_code == 1
    assert not (tmp_path / "config.yaml").exists()

    result = run(
        cli, "login", "--server", running_server.url, "--token", running_server.admin_token
    )
    assert result.exit_code == 0, result.output
    config = tmp_path / "config.yaml"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert run(cli, "get", "jobs").exit_code == 0


def test_schema_prints_the_manifest_schema(cli: CliRunner) -> None:
    schema = json.loads(run(cli, "schema").stdout)
    assert schema["title"]
    assert "metadata" in schema["properties"]


def test_usage_errors_exit_2(cli: CliRunner) -> None:
    assert run(cli, "apply").exit_code == 2
    assert run(cli, "get", "jobs", "-o", "xml").exit_code == 2


def test_a_printed_job_can_be_edited_and_applied_back(cli: CliRunner, tmp_path: Path) -> None:
    run(cli, "apply", "-f", str(write(tmp_path / "job.yaml", python_manifest("cli-round-trip"))))
    printed = yaml.safe_load(run(cli, "get", "job", "cli-round-trip", "-o", "yaml").stdout)
    printed["metadata"]["description"] = "edited after get"
    edited = write(tmp_path / "edited.yaml", printed)
    assert run(cli, "validate", "-f", str(edited)).exit_code == 0
    result = run(cli, "apply", "-f", str(edited))
    assert result.stdout.strip() == "streamingjob/cli-round-trip configured"
    stale = run(cli, "apply", "-f", str(edited))
    assert stale.stdout.strip() == "streamingjob/cli-round-trip unchanged"


def test_messages_keep_their_brackets(cli: CliRunner, tmp_path: Path) -> None:
    manifest = pipeline_manifest("cli-brackets", processing={"guarantee": "EXACTLY_ONCE"})
    manifest["spec"]["pipeline"]["outputs"][0].update(
        format="jdbc", dataset="pg:public.ticks", options={"keyColumns": "order_id"}
    )
    del manifest["spec"]["pipeline"]["outputs"][0]["path"]
    result = run(cli, "validate", "-f", str(write(tmp_path / "job.yaml", manifest)))
    assert result.exit_code == 2
    assert "e.g. [order_id]" in result.stderr
