"""Opening the services on a store whose sealed secrets need a key file that is gone stops the
start (each backend): a new key, made as on a first start, would open none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.errors import StoreUnusable
from streamjobs.services.container import open_services
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True))


def test_a_key_file_gone_that_sealed_secrets_need_stops_the_start(
    database_url: str, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path / "home", database_url=database_url)
    services = open_services(settings)
    services.secrets.put("default", "api-token", "s3cret", actor=ADMIN)
    services.store.close()
    settings.secret_key_file.unlink()
    with pytest.raises(StoreUnusable, match="that opens them is missing"):
        open_services(settings)
    assert not settings.secret_key_file.exists()


def test_a_configured_key_stands_in_for_the_key_file(database_url: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", database_url=database_url)
    services = open_services(settings)
    services.secrets.put("default", "api-token", "s3cret", actor=ADMIN)
    services.store.close()
    key = settings.secret_key_file.read_text().strip()
    settings.secret_key_file.unlink()
    again = open_services(
        Settings(home=tmp_path / "home", database_url=database_url, secret_key=key)
    )
    assert again.secrets.resolve("default", ["api-token"]) == {"api-token": "s3cret"}
    again.store.close()
