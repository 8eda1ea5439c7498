"""``make run`` says what it does: ``streamjobs admin bootstrap`` (and ``server``) print a line
when they migrate the store, naming it and the revision, and none when there is nothing to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import make_url

from streamjobs.store.db import MIGRATIONS_DIRECTORY


def bootstrap(home: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STREAMJOBS_HOME": str(home), "STREAMJOBS_DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", "streamjobs.cli", "admin", "bootstrap"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def newest_revision() -> str:
    return max(
        path.name.split("_", 1)[0] for path in (MIGRATIONS_DIRECTORY / "versions").glob("0*.py")
    )


def test_bootstrap_says_when_it_migrates_the_store(tmp_path: Path, database_url: str) -> None:
    first = bootstrap(tmp_path / "home", database_url)

    assert first.returncode == 0, first.stderr
    [line] = [line for line in first.stderr.splitlines() if line.startswith("migrating store")]
    assert line.endswith(f"from revision none (a new store) to revision {newest_revision()}")
    password = make_url(database_url).password
    if password:
        assert str(password) not in line

    second = bootstrap(tmp_path / "home", database_url)

    assert second.returncode == 0, second.stderr
    assert "migrating store" not in second.stderr
