"""Rotating the key that seals secrets, on each backend: after a new key is put first, every
stored secret is resealed under it in one transaction (same value, same version) and then opens
with the new key alone; a secret no key opens stops the reseal before it changes anything."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.services.container import Services, open_services
from streamjobs.services.secret_box import SecretUnreadable, new_key
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True))
VALUES = {"db-password": "pg-pa55word", "api-token": "tok-123"}


def services_with(keys: list[bytes], database_url: str, home: Path, clock: FakeClock) -> Services:
    configured = ",".join(base64.urlsafe_b64encode(key).decode() for key in keys)
    settings = Settings(home=home, database_url=database_url, secret_key=configured)
    return open_services(settings, clock=clock)


def test_a_reseal_moves_every_secret_under_the_first_key(
    database_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    old, new = new_key(), new_key()
    before = services_with([old], database_url, tmp_path, clock)
    for name, value in VALUES.items():
        before.secrets.put("default", name, value, actor=ADMIN)
    listed = before.secrets.list("default", actor=ADMIN)
    before.store.close()

    rotating = services_with([new, old], database_url, tmp_path, clock)
    resealed = rotating.secrets.reseal_all()
    again = rotating.secrets.reseal_all()
    rotating.store.close()

    assert (resealed.resealed, resealed.secrets) == (2, 2)
    assert (again.resealed, again.secrets) == (0, 2)
    after = services_with([new], database_url, tmp_path, clock)
    assert after.secrets.resolve("default", list(VALUES)) == VALUES
    assert after.secrets.list("default", actor=ADMIN) == listed
    after.store.close()


def test_a_secret_no_key_opens_stops_the_reseal_and_changes_nothing(
    database_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    lost, old, new = new_key(), new_key(), new_key()
    with_old = services_with([old], database_url, tmp_path, clock)
    with_old.secrets.put("default", "a-password", "resealed first", actor=ADMIN)
    with_old.store.close()
    with_lost = services_with([lost], database_url, tmp_path, clock)
    with_lost.secrets.put("default", "z-token", "sealed under a lost key", actor=ADMIN)
    with_lost.store.close()

    rotating = services_with([new, old], database_url, tmp_path, clock)
    with pytest.raises(SecretUnreadable, match="default/z-token"):
        rotating.secrets.reseal_all()
    rotating.store.close()

    still_old = services_with([old], database_url, tmp_path, clock)
    assert still_old.secrets.resolve("default", ["a-password"]) == {"a-password": "resealed first"}
    still_old.store.close()
