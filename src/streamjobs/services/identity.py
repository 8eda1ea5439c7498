"""Access tokens and passwords: issuing and checking them, and bootstrapping the first admin.

A token is shown once when issued; only its SHA-256 digest is stored. Tokens carry 256 bits of
randomness, so a fast digest is the right tool here. Passwords, chosen by people, are stored as
Argon2id hashes (``services.passwords``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound, Unauthenticated
from streamjobs.services.passwords import Passwords
from streamjobs.store import TokenRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.identity import UserRecord

TOKEN_PREFIX = "sj_"
LAST_USED_RESOLUTION = timedelta(minutes=1)
"""A token's last-used time is recorded to the minute, so reads do not each cost a write."""
TOKEN_RECHECK = timedelta(seconds=5)
"""How long a token found valid is believed before the store is asked again."""
MAX_VERIFIED_TOKENS = 10_000
ADMIN_USER = "admin"
BOOTSTRAP_TOKEN_NAME = "bootstrap"
BOOTSTRAP_ACTOR = Actor(Principal(ADMIN_USER, is_admin=True), source="bootstrap")
MIN_PASSWORD_LENGTH = 12
MAX_TOKEN_NAME_LENGTH = 255
MAX_TOKEN_DAYS = 3650


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def principal_of(repos: Repositories, user: UserRecord) -> Principal:
    """The principal ``user`` is now: its kind, its groups, and its domain permissions."""
    groups = repos.groups.groups_of(user.name)
    return Principal(
        name=user.name,
        is_admin=user.is_admin,
        kind=user.kind,
        groups=groups,
        permissions=repos.grants.domain_permissions(user.name, groups),
    )


@dataclass(frozen=True)
class _Verified:
    """A token found valid at ``checked_at``, and whom it stands for."""

    principal: Principal
    checked_at: datetime
    expires_at: datetime | None

    def still_valid(self, now: datetime) -> bool:
        if self.expires_at is not None and self.expires_at <= now:
            return False
        return timedelta(0) <= now - self.checked_at < TOKEN_RECHECK


@dataclass(frozen=True)
class Bootstrap:
    """What bootstrapping did: ``token`` is set only when a new admin token was issued."""

    created: bool
    token: str | None
    password: str | None = None
    """Set only when a new admin password was generated."""


class IdentityService:
    """Issues and checks access tokens."""

    def __init__(self, *, store: Store, clock: Clock, passwords: Passwords) -> None:
        self._store = store
        self._clock = clock
        self._passwords = passwords
        self._verified: dict[str, _Verified] = {}

    def issue_token(
        self, user: str, name: str, *, actor: Actor, expires_at: datetime | None = None
    ) -> str:
        """Issue a token for ``user`` and return it; it cannot be read back later."""
        with self._store.transaction() as repos:
            return self._issue(repos, user, name, actor=actor, expires_at=expires_at)

    def believed(self, token: str) -> Principal | None:
        """Whom ``token`` stands for if it was found valid less than ``TOKEN_RECHECK`` ago (and
        has not expired since), without reading the store; None: ask ``authenticate``."""
        verified = self._verified.get(token_digest(token))
        if verified is not None and verified.still_valid(self._clock.now()):
            return verified.principal
        return None

    def authenticate(self, token: str) -> Principal:
        """The principal a bearer token stands for; Unauthenticated if it is not valid now.

        A token found valid is believed for ``TOKEN_RECHECK`` without reading the store again
        (never past its expiry): every API call authenticates, and the read was a large part of
        a small call's time. A revocation through this server takes effect at once; one made
        by another server sharing the database, within ``TOKEN_RECHECK``.
        """
        believed = self.believed(token)
        if believed is not None:
            return believed
        now = self._clock.now()
        digest = token_digest(token)
        with self._store.transaction() as repos:
            record = repos.tokens.find_by_hash(token_digest(token))
            if record is None or record.revoked_at is not None:
                raise Unauthenticated("the access token is not valid")
            if record.expires_at is not None and record.expires_at <= now:
                raise Unauthenticated("the access token has expired")
            if record.last_used_at is None or now - record.last_used_at >= LAST_USED_RESOLUTION:
                repos.tokens.touch(record.id, now)
            principal = principal_of(repos, repos.users.get(record.user_name))
        if len(self._verified) >= MAX_VERIFIED_TOKENS:
            self._verified.clear()
        self._verified[digest] = _Verified(principal, checked_at=now, expires_at=record.expires_at)
        return principal

    def bootstrap_admin(self) -> Bootstrap:
        """Create the ``admin`` user with a token, unless it exists already."""
        with self._store.transaction() as repos:
            if repos.users.find(ADMIN_USER) is not None:
                return Bootstrap(created=False, token=None)
            repos.users.add(ADMIN_USER, is_admin=True, at=self._clock.now())
            self._audit(repos, BOOTSTRAP_ACTOR, "user.created", "user", ADMIN_USER)
            token = self._issue(
                repos, ADMIN_USER, BOOTSTRAP_TOKEN_NAME, actor=BOOTSTRAP_ACTOR, expires_at=None
            )
            password = secrets.token_urlsafe(15)
            repos.users.set_password_hash(ADMIN_USER, self._passwords.hash(password))
        return Bootstrap(created=True, token=token, password=password)

    def set_password(self, user: str, password: str, *, actor: Actor) -> None:
        """Give ``user`` a new password (at least ``MIN_PASSWORD_LENGTH`` characters); every web
        session the user has ends with the old password."""
        password_hash = self.password_hash(password)
        with self._store.transaction() as repos:
            record = repos.users.find(user)
            if record is None:
                raise NotFound("user", user)
            repos.users.set_password_hash(user, password_hash)
            repos.web_sessions.end_all_of(record.id)
            self._audit(repos, actor, "user.password-set", "user", user)

    def password_hash(self, password: str) -> str:
        """The Argon2id hash of a new password; ``InvalidInput`` at ``password`` if it is
        shorter than ``MIN_PASSWORD_LENGTH``."""
        if len(password) < MIN_PASSWORD_LENGTH:
            raise InvalidInput(
                [FieldError("password", f"must be at least {MIN_PASSWORD_LENGTH} characters")]
            )
        return self._passwords.hash(password)

    def principal(self, user: str) -> Principal:
        """The principal of an existing user (for a signed-in session); Unauthenticated if the
        user is gone."""
        with self._store.transaction() as repos:
            record = repos.users.find(user)
            if record is None:
                raise Unauthenticated("the session's user no longer exists; sign in again")
            return principal_of(repos, record)

    def forget_verified(self) -> None:
        """Check every token against the store again: call after a change to who is who (a
        user, a group, a membership or a domain grant), so it takes effect on the next request."""
        self._verified.clear()

    def _issue(
        self,
        repos: Repositories,
        user: str,
        name: str,
        *,
        actor: Actor,
        expires_at: datetime | None,
    ) -> str:
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        repos.tokens.add(
            user_name=user,
            name=name,
            token_hash=token_digest(token),
            at=self._clock.now(),
            expires_at=expires_at,
        )
        self._audit(repos, actor, "token.issued", "token", f"{user}/{name}")
        return token

    def _audit(self, repos: Repositories, actor: Actor, action: str, kind: str, name: str) -> None:
        repos.audit.append(
            at=self._clock.now(),
            actor=actor.name,
            action=action,
            resource_kind=kind,
            resource_name=name,
            detail={},
            source=actor.source,
        )

    def list_tokens(self, user: str) -> list[TokenRecord]:
        """The tokens of ``user``, oldest first, revoked and expired ones included (a read: not
        audited)."""
        with self._store.transaction() as repos:
            return repos.tokens.list_for_user(user)

    def create_token(
        self, user: str, name: str, *, actor: Actor, expires_in_days: int | None = None
    ) -> str:
        """Issue a token called ``name`` for ``user``, valid for ``expires_in_days`` days (or
        until revoked); the name and the days are checked first, each error naming its field."""
        name = name.strip()
        errors = []
        if not name:
            errors.append(FieldError("name", "give the token a name"))
        elif len(name) > MAX_TOKEN_NAME_LENGTH:
            errors.append(FieldError("name", f"must be at most {MAX_TOKEN_NAME_LENGTH} characters"))
        if expires_in_days is not None and not 1 <= expires_in_days <= MAX_TOKEN_DAYS:
            errors.append(
                FieldError("expiresInDays", f"must be between 1 and {MAX_TOKEN_DAYS} days")
            )
        if errors:
            raise InvalidInput(errors)
        expires_at = (
            self._clock.now() + timedelta(days=expires_in_days) if expires_in_days else None
        )
        return self.issue_token(user, name, actor=actor, expires_at=expires_at)

    def revoke_token(self, user: str, token_id: str, *, actor: Actor) -> TokenRecord:
        """Revoke one of ``user``'s own tokens; ``NotFound`` for a token of anybody else, so
        nobody learns which token ids exist. Revoking twice keeps the first time."""
        with self._store.transaction() as repos:
            owned = {token.id: token for token in repos.tokens.list_for_user(user)}
            token = owned.get(token_id)
            if token is None:
                raise NotFound("access token", token_id)
            if token.revoked_at is None:
                repos.tokens.revoke(token_id, self._clock.now())
                self._audit(repos, actor, "token.revoked", "token", f"{user}/{token.name}")
            revoked = next(f for f in repos.tokens.list_for_user(user) if f.id == token_id)
        # After the commit, so no check made meanwhile can believe the token again.
        self._verified.clear()
        return revoked
