"""Users and access tokens: only hashes are stored; tokens are found, used and revoked by them."""

from __future__ import annotations

from dataclasses import fields
from datetime import timedelta

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store import Store, TokenRecord


@pytest.fixture
def users(store: Store, clock: FakeClock) -> None:
    """An admin, ``root``, and a plain user, ``alice``."""
    with store.transaction() as repos:
        repos.users.add("root", is_admin=True, password_hash="$argon2id$root", at=clock.now())
        repos.users.add("alice", is_admin=False, at=clock.now())


@pytest.mark.usefixtures("users")
def test_users_are_added_found_and_listed_by_name(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        root = repos.users.get("root")
        assert (root.name, root.is_admin, root.created_at) == ("root", True, clock.now())
        assert root.password_hash == "$argon2id$root"
        assert "argon2" not in repr(root)
        assert repos.users.find("alice") is not None
        assert repos.users.find("nobody") is None
        assert [user.name for user in repos.users.list()] == ["alice", "root"]


@pytest.mark.usefixtures("users")
def test_a_missing_or_taken_user_name_is_refused(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        with pytest.raises(NotFound, match="user 'nobody'"):
            repos.users.get("nobody")
        with pytest.raises(AlreadyExists, match="user 'alice'"):
            repos.users.add("alice", is_admin=True, at=clock.now())


@pytest.fixture
def laptop_token(users: None, store: Store, clock: FakeClock) -> TokenRecord:
    """``root``'s token "laptop", with hash "hash-of-laptop", expiring in a day."""
    with store.transaction() as repos:
        return repos.tokens.add(
            user_name="root",
            name="laptop",
            token_hash="hash-of-laptop",
            at=clock.now(),
            expires_at=clock.now() + timedelta(days=1),
        )


def test_a_token_is_found_by_its_hash_with_its_user(
    store: Store, laptop_token: TokenRecord, clock: FakeClock
) -> None:
    with store.transaction() as repos:
        found = repos.tokens.find_by_hash("hash-of-laptop")
        assert repos.tokens.find_by_hash("hash-of-something-else") is None
    assert found == laptop_token
    assert (found.name, found.user_name, found.user_is_admin) == ("laptop", "root", True)
    assert found.created_at == clock.now()
    assert found.expires_at == clock.now() + timedelta(days=1)
    assert (found.revoked_at, found.last_used_at) == (None, None)
    assert "token_hash" not in {field.name for field in fields(TokenRecord)}


def test_touch_records_the_last_use(
    store: Store, laptop_token: TokenRecord, clock: FakeClock
) -> None:
    clock.advance(30)
    with store.transaction() as repos:
        repos.tokens.touch(laptop_token.id, clock.now())
        found = repos.tokens.find_by_hash("hash-of-laptop")
    assert found is not None
    assert found.last_used_at == clock.now()


def test_revoking_keeps_the_first_revocation_time(
    store: Store, laptop_token: TokenRecord, clock: FakeClock
) -> None:
    revoked_at = clock.now()
    with store.transaction() as repos:
        repos.tokens.revoke(laptop_token.id, revoked_at)
    clock.advance(60)
    with store.transaction() as repos:
        repos.tokens.revoke(laptop_token.id, clock.now())
        found = repos.tokens.find_by_hash("hash-of-laptop")
    assert found is not None
    assert found.revoked_at == revoked_at
    assert not found.is_valid_at(clock.now())


def test_a_token_is_valid_until_it_expires(laptop_token: TokenRecord, clock: FakeClock) -> None:
    assert laptop_token.is_valid_at(clock.now())
    assert not laptop_token.is_valid_at(clock.now() + timedelta(days=1))


@pytest.mark.usefixtures("laptop_token")
def test_touching_or_revoking_an_unknown_token_is_not_found(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        with pytest.raises(NotFound, match="access token 'nope'"):
            repos.tokens.touch("nope", clock.now())
        with pytest.raises(NotFound, match="access token 'nope'"):
            repos.tokens.revoke("nope", clock.now())


@pytest.mark.usefixtures("laptop_token")
def test_token_names_are_unique_per_user(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        repos.tokens.add(user_name="alice", name="laptop", token_hash="h2", at=clock.now())
    with pytest.raises(AlreadyExists, match="access token 'laptop'"), store.transaction() as repos:
        repos.tokens.add(user_name="root", name="laptop", token_hash="h3", at=clock.now())


@pytest.mark.usefixtures("users")
def test_a_token_needs_an_existing_user(store: Store, clock: FakeClock) -> None:
    with pytest.raises(NotFound, match="user 'nobody'"), store.transaction() as repos:
        repos.tokens.add(user_name="nobody", name="t", token_hash="h", at=clock.now())


@pytest.mark.usefixtures("laptop_token")
def test_a_users_tokens_are_listed_oldest_first(store: Store, clock: FakeClock) -> None:
    clock.advance(10)
    with store.transaction() as repos:
        repos.tokens.add(user_name="root", name="ci", token_hash="hash-of-ci", at=clock.now())
        repos.tokens.add(user_name="alice", name="hers", token_hash="h-alice", at=clock.now())
    with store.transaction() as repos:
        assert [token.name for token in repos.tokens.list_for_user("root")] == ["laptop", "ci"]
        assert [token.name for token in repos.tokens.list_for_user("alice")] == ["hers"]
        with pytest.raises(NotFound, match="user 'nobody'"):
            repos.tokens.list_for_user("nobody")
