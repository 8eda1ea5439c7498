"""The CLI against the shared real server, and helpers to run it on manifests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from streamjobs.cli.main import app
from tests.conftest import RunningServer


@pytest.fixture
def cli(
    running_server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> CliRunner:
    monkeypatch.setenv("STREAMJOBS_SERVER", running_server.url)
    monkeypatch.setenv("STREAMJOBS_TOKEN", running_server.admin_token)
    monkeypatch.setenv("STREAMJOBS_CONFIG", str(tmp_path / "config.yaml"))
    return CliRunner()


def run(cli: CliRunner, *args: str, stdin: str | None = None) -> Result:
    return cli.invoke(app, list(args), input=stdin)


def write(path: Path, *documents: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(documents))
    return path
