"""People's passwords, stored as Argon2id hashes at the cost the operator chose.

Checks take as long for a user without a password (or without an account) as for a wrong
password: a dummy hash of the same cost is checked instead. A hash made at another cost is
replaced at the next good sign-in (``rehashed_if_outdated``), so a changed cost reaches every
user who signs in.
"""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from streamjobs.domain.password_cost import DEFAULT_PASSWORD_COST, PasswordCost


class Passwords:
    """Hashes and checks passwords at one ``PasswordCost``."""

    def __init__(self, cost: PasswordCost | None = None) -> None:
        self.cost = cost or PasswordCost.parse(DEFAULT_PASSWORD_COST)
        self._hasher = PasswordHasher(
            time_cost=self.cost.passes,
            memory_cost=self.cost.memory_kib,
            parallelism=self.cost.lanes,
        )
        self._dummy_hash = self._hasher.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def matches(self, stored_hash: str | None, password: str) -> bool:
        """Whether ``password`` is the one ``stored_hash`` was made from; without a hash, a
        dummy one is checked, so that a missing user or password takes as long as a wrong one."""
        try:
            self._hasher.verify(stored_hash or self._dummy_hash, password)
        except (VerificationError, InvalidHashError):
            return False
        return stored_hash is not None

    def rehashed_if_outdated(self, stored_hash: str, password: str) -> str | None:
        """A new hash of the (correct) ``password`` when the stored one has another cost."""
        return self.hash(password) if self._hasher.check_needs_rehash(stored_hash) else None
