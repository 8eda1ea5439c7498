"""STREAMJOBS_HOME is the server's alone: a fresh one is 0700, a wider one is narrowed with a
warning naming each path, and what belongs to drivers (attempt directories, checkpoints, run-as
homes) and what links point at are left as they are."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from streamjobs.services.home_permissions import narrow_home, secure_home, sqlite_file
from streamjobs.settings import Settings


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def made(path: Path, mode: int, *, directory: bool = False) -> Path:
    if directory:
        path.mkdir(parents=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(path.name)
    path.chmod(mode)
    return path


def test_a_fresh_home_is_0700_and_its_database_file_0600(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "fresh" / "home")
    assert secure_home(settings) == []
    assert mode_of(settings.resolved_home) == 0o700
    assert mode_of(settings.resolved_home / "streamjobs.db") == 0o600
    assert (settings.resolved_home / "streamjobs.db").stat().st_size == 0


def test_a_wide_home_is_narrowed_and_each_path_named_in_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = made(tmp_path / "home", 0o755, directory=True)
    store = made(home / "streamjobs.db", 0o644)
    wal = made(home / "streamjobs.db-wal", 0o664)
    token = made(home / "admin-token", 0o644)
    private_already = made(home / "secret.key", 0o600)
    apps = made(home / "apps", 0o755, directory=True)
    application = made(apps / "app-0123456789ab", 0o755, directory=True)
    nested = made(home / "cache" / "deeper", 0o777, directory=True)
    nested.parent.chmod(0o750)
    caplog.set_level(logging.WARNING, logger="streamjobs.services.home_permissions")

    narrowed = narrow_home(home)

    assert set(narrowed) == {home, store, wal, token, apps, application, nested.parent, nested}
    for directory in (home, apps, application, nested.parent, nested):
        assert mode_of(directory) == 0o700, directory
    for file in (store, wal, token, private_already):
        assert mode_of(file) == 0o600, file
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"{token} was 0644, now 0600: only the server may read it" in warnings
    assert f"{home} was 0755, now 0700: only the server may read it" in warnings
    assert len(warnings) == len(narrowed)
    assert not any(str(private_already) in warning for warning in warnings)


def test_what_belongs_to_drivers_is_left_as_the_launcher_made_it(tmp_path: Path) -> None:
    home = made(tmp_path / "home", 0o700, directory=True)
    attempt = made(home / "apps" / "app-0123456789ab" / "1", 0o755, directory=True)
    attempt_log = made(attempt / "stderr.log", 0o644)
    attempt_tmp = made(attempt / "tmp", 0o1777, directory=True)
    checkpoint = made(home / "checkpoints" / "orders", 0o755, directory=True)
    checkpoints = checkpoint.parent
    checkpoints.chmod(0o755)
    identity = made(home / "run-as" / "streamjobs-alice", 0o755, directory=True)
    run_as = identity.parent
    run_as.chmod(0o751)
    deeper_file = made(home / "cache" / "notes.txt", 0o644)

    narrow_home(home)

    for path, mode in [
        (attempt, 0o755),
        (attempt_log, 0o644),
        (attempt_tmp, 0o1777),
        (checkpoints, 0o755),
        (checkpoint, 0o755),
        (run_as, 0o751),
        (identity, 0o755),
        (deeper_file, 0o644),  # only the home's own files; its directory is 0700 now
    ]:
        assert mode_of(path) == mode, path
    assert mode_of(home / "cache") == 0o700


def test_links_are_not_followed(tmp_path: Path) -> None:
    outside = made(tmp_path / "outside", 0o755, directory=True)
    outside_file = made(outside / "shared.txt", 0o644)
    home = made(tmp_path / "home", 0o700, directory=True)
    (home / "linked-directory").symlink_to(outside)
    (home / "linked-file").symlink_to(outside_file)

    assert narrow_home(home) == []
    assert mode_of(outside) == 0o755
    assert mode_of(outside_file) == 0o644


def test_an_existing_database_file_keeps_its_content(tmp_path: Path) -> None:
    home = made(tmp_path / "home", 0o700, directory=True)
    database = made(home / "streamjobs.db", 0o600)
    secure_home(Settings(home=home))
    assert database.read_text() == "streamjobs.db"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:////var/lib/s/streamjobs.db", Path("/var/lib/s/streamjobs.db")),
        ("sqlite+pysqlite:////srv/x.db", Path("/srv/x.db")),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("postgresql://user@db/streamjobs", None),
    ],
)
def test_only_a_sqlite_database_on_disk_is_a_file_to_create(
    url: str, expected: Path | None
) -> None:
    assert sqlite_file(url) == expected
