"""The CLI about checkpoints: ``apply`` prints the server's warning that a new job resumes from
a checkpoint that holds state, and ``delete job`` says where the checkpoint stays, or deletes it
with ``--delete-checkpoint``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.checkpoint_server import CheckpointServer, checkpoint_server, with_state
from tests.cli.conftest import run, write
from tests.factories import console_manifest


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[CheckpointServer]:
    with checkpoint_server(database_url, tmp_path / "server") as running:
        yield running


@pytest.fixture
def cli(server: CheckpointServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", server.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", server.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def test_delete_says_where_the_checkpoint_stays_and_apply_warns_again(
    cli: CliRunner, server: CheckpointServer, tmp_path: Path
) -> None:
    manifest = write(tmp_path / "job.yaml", console_manifest("ticks"))
    assert run(cli, "apply", "-f", str(manifest)).exit_code == 0
    checkpoint = with_state(server.checkpoint_of("ticks"))

    deleted = run(cli, "delete", "job", "ticks")

    assert deleted.exit_code == 0, deleted.output
    assert "streamingjob/ticks deleted" in deleted.stdout
    assert f"Warning: the checkpoint of job 'ticks' stays at {checkpoint.as_uri()}" in (
        deleted.stderr
    )

    applied = run(cli, "apply", "-f", str(manifest))

    assert applied.exit_code == 0, applied.output
    assert "streamingjob/ticks created" in applied.stdout
    assert "Warning:" in applied.stderr
    assert "its first run resumes from there" in applied.stderr


def test_delete_checkpoint_deletes_it(
    cli: CliRunner, server: CheckpointServer, tmp_path: Path
) -> None:
    assert (
        run(cli, "apply", "-f", str(write(tmp_path / "j.yaml", console_manifest("t")))).exit_code
        == 0
    )
    checkpoint = with_state(server.checkpoint_of("t"))

    deleted = run(cli, "delete", "job", "t", "--delete-checkpoint")

    assert deleted.exit_code == 0, deleted.output
    assert "streamingjob/t deleted with its checkpoint" in deleted.stdout
    assert "Warning" not in deleted.stderr
    assert not checkpoint.exists()


def test_an_unchanged_apply_warns_of_nothing(
    cli: CliRunner, server: CheckpointServer, tmp_path: Path
) -> None:
    manifest = write(tmp_path / "job.yaml", console_manifest("quiet"))
    assert run(cli, "apply", "-f", str(manifest)).exit_code == 0
    with_state(server.checkpoint_of("quiet"))

    again = run(cli, "apply", "-f", str(manifest))

    assert again.exit_code == 0
    assert "unchanged" in again.stdout
    assert "Warning" not in again.stderr
