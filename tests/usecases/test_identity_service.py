"""Tokens: issued once, stored as a digest, refused when expired or revoked, last use recorded."""

from __future__ import annotations

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import InvalidInput, NotFound, Unauthenticated
from streamjobs.services.container import Services
from streamjobs.services.identity import BOOTSTRAP_ACTOR, TOKEN_RECHECK, token_digest


def test_bootstrap_creates_the_admin_once(services: Services) -> None:
    first = services.identity.bootstrap_admin()
    assert first.created
    assert first.token is not None
    assert services.identity.authenticate(first.token).is_admin
    again = services.identity.bootstrap_admin()
    assert (again.created, again.token) == (False, None)


def test_only_the_digest_is_stored(services: Services) -> None:
    token = services.identity.bootstrap_admin().token
    assert token is not None
    with services.store.transaction() as repos:
        assert repos.tokens.find_by_hash(token_digest(token)) is not None
        assert repos.tokens.find_by_hash(token) is None


def test_a_token_expires(services: Services, clock: FakeClock) -> None:
    services.identity.bootstrap_admin()
    expires_at = clock.now().replace(hour=1)
    token = services.identity.issue_token(
        "admin", "short", actor=BOOTSTRAP_ACTOR, expires_at=expires_at
    )
    assert services.identity.authenticate(token).name == "admin"
    clock.advance(3600)
    with pytest.raises(Unauthenticated, match="expired"):
        services.identity.authenticate(token)


def test_a_revoked_token_is_refused_at_once_though_just_believed(services: Services) -> None:
    services.identity.bootstrap_admin()
    token = services.identity.issue_token("admin", "ci", actor=BOOTSTRAP_ACTOR)
    assert services.identity.authenticate(token).name == "admin"
    (issued,) = [t for t in services.identity.list_tokens("admin") if t.name == "ci"]
    services.identity.revoke_token("admin", issued.id, actor=BOOTSTRAP_ACTOR)
    with pytest.raises(Unauthenticated, match="not valid"):
        services.identity.authenticate(token)


def test_a_revocation_by_another_server_is_seen_after_the_recheck_time(
    services: Services, clock: FakeClock
) -> None:
    services.identity.bootstrap_admin()
    token = services.identity.issue_token("admin", "ci", actor=BOOTSTRAP_ACTOR)
    services.identity.authenticate(token)
    with services.store.transaction() as repos:
        record = repos.tokens.find_by_hash(token_digest(token))
        assert record is not None
        repos.tokens.revoke(record.id, clock.now())
    assert services.identity.authenticate(token).name == "admin"
    clock.advance(TOKEN_RECHECK.total_seconds())
    with pytest.raises(Unauthenticated, match="not valid"):
        services.identity.authenticate(token)


def test_a_believed_token_still_expires_on_time(services: Services, clock: FakeClock) -> None:
    services.identity.bootstrap_admin()
    expires_at = clock.now() + TOKEN_RECHECK / 2
    token = services.identity.issue_token(
        "admin", "short", actor=BOOTSTRAP_ACTOR, expires_at=expires_at
    )
    services.identity.authenticate(token)
    clock.advance((TOKEN_RECHECK / 2).total_seconds())
    with pytest.raises(Unauthenticated, match="expired"):
        services.identity.authenticate(token)


def test_last_use_is_recorded_to_the_minute(services: Services, clock: FakeClock) -> None:
    token = services.identity.bootstrap_admin().token
    assert token is not None

    def last_used() -> object:
        with services.store.transaction() as repos:
            record = repos.tokens.find_by_hash(token_digest(token))
        assert record is not None
        return record.last_used_at

    services.identity.authenticate(token)
    first_use = clock.now()
    assert last_used() == first_use
    clock.advance(30)
    services.identity.authenticate(token)
    assert last_used() == first_use
    clock.advance(31)
    services.identity.authenticate(token)
    assert last_used() == clock.now()


def test_a_token_for_an_unknown_user_is_refused(services: Services) -> None:
    with pytest.raises(NotFound):
        services.identity.issue_token("nobody", "t", actor=BOOTSTRAP_ACTOR)


def test_passwords_sign_in_and_refuse_alike(services: Services) -> None:
    outcome = services.identity.bootstrap_admin()
    assert outcome.password is not None
    assert services.sign_in.sign_in("admin", outcome.password, address="a").principal.is_admin
    with pytest.raises(Unauthenticated) as wrong_password:
        services.sign_in.sign_in("admin", "not the password", address="a")
    with pytest.raises(Unauthenticated) as unknown_user:
        services.sign_in.sign_in("nobody", outcome.password, address="a")
    assert wrong_password.value.detail == unknown_user.value.detail
    with pytest.raises(InvalidInput, match="at least 12"):
        services.identity.set_password("admin", "short", actor=BOOTSTRAP_ACTOR)
    with pytest.raises(NotFound):
        services.identity.set_password("nobody", "long enough password", actor=BOOTSTRAP_ACTOR)
    services.identity.set_password("admin", "a new long password", actor=BOOTSTRAP_ACTOR)
    assert (
        services.sign_in.sign_in("admin", "a new long password", address="a").principal.name
        == "admin"
    )
    with pytest.raises(Unauthenticated):
        services.sign_in.sign_in("admin", outcome.password, address="a")
