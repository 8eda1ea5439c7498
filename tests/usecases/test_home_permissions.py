"""A server opened on a fresh home makes it the server's alone (0700, its files 0600, the
SQLite database and its -wal and -shm files included); one opened on a wider home narrows it
and says so."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from streamjobs.services.container import open_services
from streamjobs.settings import Settings


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_home_and_everything_the_server_writes_there_are_private(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path / "home")
    services = open_services(settings)
    services.identity.bootstrap_admin()
    home = settings.resolved_home
    assert mode_of(home) == 0o700
    files = {path.name: mode_of(path) for path in home.iterdir() if path.is_file()}
    assert {"streamjobs.db", "streamjobs.db-wal", "streamjobs.db-shm", "secret.key"} <= set(files)
    assert set(files.values()) == {0o600}, files


def test_a_wider_home_is_narrowed_at_start_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(home=tmp_path / "home")
    open_services(settings).store.engine.dispose()
    home = settings.resolved_home
    home.chmod(0o755)
    (home / "streamjobs.db").chmod(0o644)
    caplog.set_level(logging.WARNING, logger="streamjobs.services.home_permissions")
    open_services(settings)
    assert (mode_of(home), mode_of(home / "streamjobs.db")) == (0o700, 0o600)
    assert f"{home / 'streamjobs.db'} was 0644, now 0600" in caplog.text
    assert f"{home} was 0755, now 0700" in caplog.text
