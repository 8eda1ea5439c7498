"""``streamjobs admin rotate-secret-key`` on the server's machine: a new key goes first in the key
file with the old one kept, every secret is resealed under it, and ``--retire`` then leaves the new
key alone; with the keys in STREAMJOBS_SECRET_KEY it refuses (exit 2) and says how instead."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from typer.testing import CliRunner

from streamjobs.cli.main import app
from streamjobs.domain.access import Actor, Principal
from streamjobs.services.container import open_services
from streamjobs.services.secret_box import read_key_file
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STREAMJOBS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STREAMJOBS_SECRET_KEY", raising=False)
    monkeypatch.delenv("STREAMJOBS_DATABASE_URL", raising=False)
    services = open_services(Settings())
    services.secrets.put("default", "db-password", "pg-pa55word", actor=ADMIN)
    services.store.close()
    return tmp_path / "home"


def resolved_with_keys(keys: list[bytes]) -> dict[str, str]:
    """The secret as a server holding only ``keys`` reads it."""
    configured = ",".join(base64.urlsafe_b64encode(key).decode() for key in keys)
    services = open_services(Settings(secret_key=configured))
    try:
        return services.secrets.resolve("default", ["db-password"])
    finally:
        services.store.close()


def test_rotate_then_retire(home: Path) -> None:
    key_file = home / "secret.key"
    (old,) = read_key_file(key_file)

    rotated = CliRunner().invoke(app, ["admin", "rotate-secret-key"])

    assert rotated.exit_code == 0, rotated.output
    assert "resealed 1 of 1 secret(s)" in rotated.stdout
    new, kept = read_key_file(key_file)
    assert kept == old != new
    assert resolved_with_keys([new]) == {"db-password": "pg-pa55word"}

    retired = CliRunner().invoke(app, ["admin", "rotate-secret-key", "--retire"])

    assert retired.exit_code == 0, retired.output
    assert "dropped 1" in retired.stdout
    assert read_key_file(key_file) == [new]
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_keys_from_the_environment_are_rotated_by_hand(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (old,) = read_key_file(home / "secret.key")
    monkeypatch.setenv("STREAMJOBS_SECRET_KEY", base64.urlsafe_b64encode(old).decode())

    refused = CliRunner().invoke(app, ["admin", "rotate-secret-key"])

    assert refused.exit_code == 2
    assert "set it to NEW,OLD" in " ".join(refused.stderr.split())
    assert read_key_file(home / "secret.key") == [old]
    new = bytes(range(32))
    both = ",".join(base64.urlsafe_b64encode(key).decode() for key in (new, old))
    monkeypatch.setenv("STREAMJOBS_SECRET_KEY", both)
    resealed = CliRunner().invoke(app, ["admin", "reseal-secrets"])
    assert resealed.exit_code == 0, resealed.output
    assert "resealed 1 of 1 secret(s)" in resealed.stdout
    monkeypatch.delenv("STREAMJOBS_SECRET_KEY")
    assert resolved_with_keys([new]) == {"db-password": "pg-pa55word"}


def test_a_rotation_that_cannot_reseal_leaves_the_key_file_as_it_was(home: Path) -> None:
    key_file = home / "secret.key"
    before = read_key_file(key_file)
    lost = base64.urlsafe_b64encode(bytes(range(32))).decode()
    elsewhere = open_services(Settings(secret_key=lost))
    elsewhere.secrets.put("default", "z-token", "sealed under a lost key", actor=ADMIN)
    elsewhere.store.close()

    failed = CliRunner().invoke(app, ["admin", "rotate-secret-key"])

    assert failed.exit_code != 0
    assert "default/z-token" in failed.stderr
    assert read_key_file(key_file) == before
    assert resolved_with_keys(before) == {"db-password": "pg-pa55word"}
