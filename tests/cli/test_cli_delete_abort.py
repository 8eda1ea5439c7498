"""``streamjobs delete job NAME [--abort]`` against a real server whose supervisor runs drivers
on the fake launcher (issue 20, item 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.factories import console_manifest
from tests.supervised_server import SupervisedServer, supervised_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SupervisedServer]:
    url = f"sqlite:///{tmp_path / 'store' / 'streamjobs.db'}"
    with supervised_server(url, tmp_path / "home") as running:
        yield running


@pytest.fixture
def cli(server: SupervisedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", server.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", server.token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def test_delete_refuses_a_job_with_a_live_application_and_abort_deletes_it(
    cli: CliRunner, server: SupervisedServer
) -> None:
    with server.client() as api:
        api.put("/api/v1/jobs/busy", json=console_manifest("busy")).raise_for_status()
        application = api.post("/api/v1/jobs/busy/run").json()

    refused = run(cli, "delete", "job", "busy")

    assert refused.exit_code == 1
    assert application["name"] in refused.output
    assert "abort" in refused.output

    deleted = run(cli, "delete", "job", "busy", "--abort")

    assert deleted.exit_code == 0, deleted.output
    assert "streamingjob/busy deleted" in deleted.output
    with server.client() as api:
        assert api.get("/api/v1/jobs/busy").status_code == 404
        state = api.get(f"/api/v1/applications/{application['id']}").json()["state"]
    assert state == "ABORTED"


def test_delete_with_abort_of_a_job_that_is_not_running(
    cli: CliRunner, server: SupervisedServer
) -> None:
    with server.client() as api:
        api.put("/api/v1/jobs/idle", json=console_manifest("idle")).raise_for_status()

    assert run(cli, "delete", "job", "idle", "--abort").exit_code == 0
    assert run(cli, "delete", "job", "idle", "--abort").exit_code == 1
