"""Secrets in the store, on each backend: names unique per bundle, versions, ciphertexts read
apart from the records."""

from __future__ import annotations

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound, StaleVersion
from streamjobs.store import SecretRecord, Store


def add(store: Store, clock: FakeClock, bundle: str, name: str, sealed: bytes) -> SecretRecord:
    with store.transaction() as repos:
        return repos.secrets.add(
            bundle=bundle, name=name, ciphertext=sealed, actor="alice", at=clock.now()
        )


@pytest.fixture
def payments(store: Store, clock: FakeClock) -> str:
    with store.transaction() as repos:
        repos.bundles.add("payments", clock.now())
    return "payments"


def test_a_secret_reads_back_without_its_ciphertext(store: Store, clock: FakeClock) -> None:
    record = add(store, clock, "default", "db-password", b"\x01sealed")
    assert (record.bundle, record.name, record.version) == ("default", "db-password", 1)
    assert (record.created_by, record.updated_by) == ("alice", "alice")
    assert record.created_at == record.updated_at == clock.now()
    assert not hasattr(record, "ciphertext")
    with store.transaction() as repos:
        assert repos.secrets.get("default", "db-password") == record
        assert repos.secrets.list("default") == [record]
        assert repos.secrets.ciphertexts("default", {"db-password", "other"}) == {
            "db-password": b"\x01sealed"
        }
        assert repos.secrets.ciphertexts("default", set()) == {}


def test_names_are_unique_per_bundle_only(store: Store, clock: FakeClock, payments: str) -> None:
    add(store, clock, "default", "api-key", b"a")
    add(store, clock, payments, "api-key", b"b")
    add(store, clock, payments, "another", b"c")
    with pytest.raises(AlreadyExists, match="api-key"):
        add(store, clock, payments, "api-key", b"d")
    with store.transaction() as repos:
        assert [r.name for r in repos.secrets.list(payments)] == ["another", "api-key"]
        assert [r.name for r in repos.secrets.list("default")] == ["api-key"]
        assert repos.secrets.ciphertexts("default", {"api-key", "another"}) == {"api-key": b"a"}
        assert repos.secrets.find("default", "another") is None


def test_replacing_bumps_the_version_and_loses_to_a_newer_change(
    store: Store, clock: FakeClock
) -> None:
    add(store, clock, "default", "token", b"one")
    clock.advance(60)
    with store.transaction() as repos:
        replaced = repos.secrets.replace(
            "default", "token", expected_version=1, ciphertext=b"two", actor="bob", at=clock.now()
        )
    assert (replaced.version, replaced.updated_by, replaced.created_by) == (2, "bob", "alice")
    assert replaced.updated_at == clock.now() != replaced.created_at
    with pytest.raises(Conflict, match="version 1"), store.transaction() as repos:
        repos.secrets.replace(
            "default", "token", expected_version=1, ciphertext=b"old", actor="eve", at=clock.now()
        )
    with store.transaction() as repos:
        assert repos.secrets.ciphertexts("default", {"token"}) == {"token": b"two"}


def test_delete_removes_only_that_bundles_secret(
    store: Store, clock: FakeClock, payments: str
) -> None:
    add(store, clock, "default", "token", b"a")
    add(store, clock, payments, "token", b"b")
    with store.transaction() as repos:
        deleted = repos.secrets.delete(payments, "token")
    assert deleted.bundle == payments
    with store.transaction() as repos:
        assert repos.secrets.list(payments) == []
        assert [r.bundle for r in repos.secrets.list("default")] == ["default"]
    with pytest.raises(NotFound, match="secret 'token'"), store.transaction() as repos:
        repos.secrets.delete(payments, "token")


def test_a_reseal_lands_only_over_the_ciphertext_it_read(store: Store, clock: FakeClock) -> None:
    record = add(store, clock, "default", "db-password", b"\x01under-old")
    with store.transaction() as repos:
        assert repos.secrets.all_ciphertexts() == {("default", "db-password"): b"\x01under-old"}
        repos.secrets.reseal("default", "db-password", was=b"\x01under-old", ciphertext=b"\x01new")

    with (
        pytest.raises(StaleVersion, match="default/db-password changed"),
        store.transaction() as repos,
    ):
        repos.secrets.reseal("default", "db-password", was=b"\x01under-old", ciphertext=b"\x01x")

    with store.transaction() as repos:
        assert repos.secrets.ciphertexts("default", {"db-password"}) == {"db-password": b"\x01new"}
        assert repos.secrets.get("default", "db-password") == record
