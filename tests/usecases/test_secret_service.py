"""The secret use cases on each backend: put, list, delete, resolve, names only in the audit log,
and no value in clear text anywhere in the database."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from sqlalchemy import select, text

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import InvalidInput, NotFound
from streamjobs.services.container import Services, open_services
from streamjobs.services.secret_box import SecretKeyError, SecretUnreadable
from streamjobs.settings import Settings
from streamjobs.store.tables import SecretRow

ANA = Actor(Principal("ana", is_admin=True), source="10.0.0.7")
"""An admin: these tests are about the use cases, not about who may take them."""
VALUE = "pg-pa55word-that-must-never-show"


def audit_trail(services: Services) -> list[tuple[str, str, str, dict[str, object]]]:
    with services.store.transaction() as repos:
        entries = repos.audit.list(limit=100)
    return [
        (entry.action, entry.resource_kind, entry.resource_name, entry.detail)
        for entry in reversed(entries)
    ]


def test_put_creates_then_replaces_and_lists_no_values(
    services: Services, clock: FakeClock
) -> None:
    record, outcome = services.secrets.put("default", "db-password", VALUE, actor=ANA)
    assert (outcome, record.version, record.created_by) == ("created", 1, "ana")
    clock.advance(30)
    record, outcome = services.secrets.put("default", "db-password", VALUE + "2", actor=ANA)
    assert (outcome, record.version, record.updated_at) == ("replaced", 2, clock.now())
    assert services.secrets.list("default", actor=ANA) == [record]
    assert services.secrets.resolve("default", ["db-password", "nope"]) == {
        "db-password": VALUE + "2"
    }
    services.secrets.delete("default", "db-password", actor=ANA)
    assert services.secrets.list("default", actor=ANA) == []
    assert services.secrets.resolve("default", ["db-password"]) == {}
    assert audit_trail(services) == [
        (
            f"secret.{action}",
            "secret",
            "default/db-password",
            {"bundle": "default", "secret": "db-password", "version": version},
        )
        for action, version in [("created", 1), ("replaced", 2), ("deleted", 2)]
    ]


def test_a_bundle_sees_only_its_own_secrets(services: Services, clock: FakeClock) -> None:
    with services.store.transaction() as repos:
        repos.bundles.add("payments", clock.now())
    services.secrets.put("payments", "api-key", "payments-value", actor=ANA)
    services.secrets.put("default", "api-key", "default-value", actor=ANA)
    assert services.secrets.resolve("payments", ["api-key"]) == {"api-key": "payments-value"}
    assert services.secrets.resolve("default", ["api-key"]) == {"api-key": "default-value"}


def test_an_unknown_bundle_or_secret_is_not_found(services: Services) -> None:
    for call in (
        lambda: services.secrets.put("nope", "api-key", "v", actor=ANA),
        lambda: services.secrets.list("nope", actor=ANA),
        lambda: services.secrets.delete("nope", "api-key", actor=ANA),
        lambda: services.secrets.list("no\x00pe", actor=ANA),
    ):
        with pytest.raises(NotFound, match="resource bundle"):
            call()
    with pytest.raises(NotFound, match="secret 'api-key' does not exist"):
        services.secrets.delete("default", "api-key", actor=ANA)
    with pytest.raises(NotFound, match="secret"):
        services.secrets.delete("default", "Not A Name", actor=ANA)
    assert audit_trail(services) == []


@pytest.mark.parametrize(
    ("name", "value", "errors"),
    [
        ("", "v", ["name: give the secret a name"]),
        ("API_KEY", "v", ["name: 'API_KEY' is not a secret name"]),
        ("-key", "v", ["name: '-key' is not a secret name"]),
        ("key-", "v", ["name: 'key-' is not a secret name"]),
        ("k" * 64, "v", ["name: must be at most 63 characters"]),
        ("ok", "", ["value: must not be empty"]),
        ("ok", "é" * 32769, ["value: is 65538 bytes; at most 65536 are kept"]),
        ("Bad", "", ["name: 'Bad' is not a secret name", "value: must not be empty"]),
    ],
)
def test_bad_names_and_values_are_refused_with_their_field(
    services: Services, name: str, value: str, errors: list[str]
) -> None:
    with pytest.raises(InvalidInput) as refused:
        services.secrets.put("default", name, value, actor=ANA)
    found = [str(error) for error in refused.value.errors]
    assert [line[: len(expected)] for line, expected in zip(found, errors, strict=True)] == errors
    assert services.secrets.list("default", actor=ANA) == []


def test_the_longest_name_and_value_are_kept(services: Services) -> None:
    name, value = "k" * 63, "v" * 65536
    services.secrets.put("default", name, value, actor=ANA)
    assert services.secrets.resolve("default", [name]) == {name: value}


def test_the_database_never_holds_a_value_in_clear_text(
    services: Services, database_url: str, tmp_path: Path
) -> None:
    services.secrets.put("default", "db-password", VALUE, actor=ANA)
    services.secrets.put("default", "db-password", VALUE + "-rotated", actor=ANA)
    with services.store.engine.connect() as connection:
        stored = connection.scalars(select(SecretRow.ciphertext)).all()
        audit = connection.execute(text("SELECT * FROM audit_log")).all()
    assert len(stored) == 1
    assert VALUE.encode() not in bytes(stored[0])
    assert VALUE not in repr(audit)
    services.store.close()
    if database_url.startswith("sqlite"):
        files = list((tmp_path / "store").glob("streamjobs.db*"))
        assert files
        for path in files:
            assert VALUE.encode() not in path.read_bytes(), path


def test_secrets_outlive_a_restart_with_the_same_key_only(
    database_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    home = tmp_path / "home"
    first = open_services(Settings(home=home, database_url=database_url), clock=clock)
    first.secrets.put("default", "token", VALUE, actor=ANA)
    assert (home / "secret.key").stat().st_mode & 0o777 == 0o600
    first.store.close()

    again = open_services(Settings(home=home, database_url=database_url), clock=clock)
    assert again.secrets.resolve("default", ["token"]) == {"token": VALUE}
    again.store.close()

    other_key = base64.urlsafe_b64encode(bytes(32)).decode()
    elsewhere = Settings(home=home, database_url=database_url, secret_key=other_key)
    other = open_services(elsewhere, clock=clock)
    with pytest.raises(SecretUnreadable, match="Put the secret again"):
        other.secrets.resolve("default", ["token"])
    other.store.close()


def test_a_wrong_configured_key_stops_the_start(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMJOBS_SECRET_KEY", "too-short")
    with pytest.raises(SecretKeyError, match="STREAMJOBS_SECRET_KEY"):
        open_services(Settings(home=tmp_path / "home", database_url=database_url))
