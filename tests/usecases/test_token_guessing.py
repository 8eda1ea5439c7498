"""Guessing a token teaches nothing: the server never compares a presented token with a stored
one character by character. It looks tokens up by their SHA-256 digest, so a guess that shares
all but its last character with a real token is looked up exactly like a random one (their
digests share nothing), and both are refused with the same answer."""

from __future__ import annotations

import secrets

import pytest

from streamjobs.domain.errors import Unauthenticated
from streamjobs.services.container import Services
from streamjobs.services.identity import BOOTSTRAP_ACTOR, token_digest
from streamjobs.store.identity import TokenRepository


def test_a_near_miss_is_looked_up_and_refused_like_a_random_guess(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.identity.bootstrap_admin()
    real = services.identity.issue_token("admin", "real", actor=BOOTSTRAP_ACTOR)
    near_miss = real[:-1] + ("A" if real[-1] != "A" else "B")
    random_guess = "sj_" + secrets.token_urlsafe(32)
    looked_up: list[str] = []
    find_by_hash = TokenRepository.find_by_hash

    def spy(self: TokenRepository, token_hash: str):  # type: ignore[no-untyped-def]
        looked_up.append(token_hash)
        return find_by_hash(self, token_hash)

    monkeypatch.setattr(TokenRepository, "find_by_hash", spy)
    answers = []
    for guess in (near_miss, random_guess):
        with pytest.raises(Unauthenticated) as refused:
            services.identity.authenticate(guess)
        answers.append(refused.value.detail)
    assert answers[0] == answers[1] == "the access token is not valid"
    assert looked_up == [token_digest(near_miss), token_digest(random_guess)]
    assert all(real not in each and token_digest(real) != each for each in looked_up)
    shared = len(_common_prefix(token_digest(real), token_digest(near_miss)))
    assert shared < 8, "a near miss's digest looks like the real one's"
    assert services.identity.authenticate(real).name == "admin"


def _common_prefix(a: str, b: str) -> str:
    prefix = ""
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += x
    return prefix
