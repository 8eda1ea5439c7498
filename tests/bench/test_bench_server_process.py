"""bench/server_process.py starts a real ``streamjobs server`` and stops its whole group."""

from __future__ import annotations

from pathlib import Path

import httpx
import psutil
import pytest
from bench.server_process import ServerProcess


def test_a_server_answers_until_it_is_stopped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ServerProcess(
        home, database_url=f"sqlite:///{home / 'streamjobs.db'}", supervisor=False
    ) as server:
        assert httpx.get(f"{server.url}/healthz").json()["status"] == "ok"
        assert 20 < server.rss_mib() < 1000
        process = psutil.Process(server.pid)
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/healthz")


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = ServerProcess(home, database_url="mysql://nowhere/db", supervisor=False)
    with pytest.raises(RuntimeError, match="the server exited"):
        server.start()
