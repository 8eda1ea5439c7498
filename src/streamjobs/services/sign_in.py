"""Signing in with a name and a password, with guessing slowed down, locked out and audited.

Each attempt is first judged by the attempts counted for the account tried and for the address it
comes from (``domain.sign_in_policy``): a throttled one is refused with the time it may be tried
again, a locked account until a user manager unlocks it. An attempt let through is counted in the
same transaction, before its password is checked (Argon2), so concurrent guesses cannot all slip
through on one judgement; a success takes its count back. Every failure and refusal is audited
(the name tried, the address, the reason; never the password), and so is every success.

Only an existing account is locked for good; a name that is no account's is refused as locked
while its failures count (the answer is the same, so it tells nothing), and then forgotten.
Counts nobody has added to for longer than the window are pruned as failures come in.

The counts live in the store (``store.sign_in_throttles``): a restart forgets nothing and servers
sharing one database count together. The Argon2 work is synchronous: callers on an event loop run
it in a thread of their own, with bounded concurrency (see ``web.routes.auth``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from streamjobs.domain.access import (
    Actor,
    DomainPermission,
    Principal,
    require_admin,
    require_domain_permission,
)
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import NotFound, TooManyAttempts, Unauthenticated
from streamjobs.domain.sign_in_policy import (
    Refusal,
    ThrottlePolicy,
    ThrottleState,
    address_subject,
    attempts_after,
    refusal,
)
from streamjobs.services.identity import principal_of
from streamjobs.services.passwords import Passwords
from streamjobs.settings import Settings
from streamjobs.store.db import Repositories, Store
from streamjobs.store.identity import UserRecord
from streamjobs.store.sign_in_throttles import ACCOUNT, ADDRESS

WRONG_CREDENTIALS = "the user name or the password is wrong"
UNKNOWN_ADDRESS = "unknown"
ANONYMOUS = "anonymous"
LONGEST_NAME_KEPT = 255
"""Names tried are kept (counted, audited) cut to the longest name the store holds."""
MAX_COUNTING_RACES = 20
"""How often an attempt judges again after others were counted first before it gives up."""
PRUNED_PER_FAILURE = 100
"""Stale counts forgotten at each failure: enough to keep up, few enough to cost nothing."""
PasswordCheck = Callable[[str | None, str], bool]
"""Whether a password matches a stored hash (None: no hash; still takes as long)."""


@dataclass(frozen=True)
class SignedInUser:
    """Who signed in: the user's id (sessions belong to it) and principal."""

    user_id: str
    principal: Principal


@dataclass(frozen=True)
class _CountedAttempt:
    """An attempt let through and counted: the account tried (None: no such user) and its
    count with this attempt."""

    record: UserRecord | None
    failures: int


class _CountedFirst(Exception):
    """Another attempt was counted since this one was judged: judge it again."""


def policies_of(settings: Settings) -> tuple[ThrottlePolicy, ThrottlePolicy]:
    """The account and the address policies the settings describe."""
    base = timedelta(seconds=settings.sign_in_base_delay_seconds)
    longest = timedelta(seconds=settings.sign_in_max_delay_seconds)
    window = timedelta(seconds=settings.sign_in_failure_window_seconds)
    account = ThrottlePolicy(
        free_failures=settings.sign_in_free_failures,
        base_delay=base,
        max_delay=longest,
        window=window,
        lockout_failures=settings.sign_in_lockout_failures,
    )
    address = ThrottlePolicy(
        free_failures=settings.sign_in_address_free_failures,
        base_delay=base,
        max_delay=longest,
        window=window,
    )
    return account, address


class SignInService:
    """Checks names and passwords, and lets a user manager lift a lockout."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        account_policy: ThrottlePolicy,
        address_policy: ThrottlePolicy,
        passwords: Passwords,
        check_password: PasswordCheck | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._account_policy = account_policy
        self._address_policy = address_policy
        self._passwords = passwords
        self._check_password = check_password or passwords.matches

    def sign_in(self, name: str, password: str, *, address: str | None) -> SignedInUser:
        """The user whose name and password these are. ``TooManyAttempts`` when the account or
        the address must wait (or the account is locked), ``Unauthenticated`` otherwise (the
        same answer whether the name or the password is wrong)."""
        tried = printable_name(name)
        source = address or UNKNOWN_ADDRESS
        attempt = self._counted(name, tried, source)
        record = attempt.record
        stored_hash = record.password_hash if record is not None else None
        matches = self._check_password(stored_hash, password)
        if matches and record is not None and stored_hash is not None:
            return self._succeeded(record, stored_hash, password, source)
        self._failed(attempt, tried, source)
        raise Unauthenticated(WRONG_CREDENTIALS)

    def unlock(self, name: str, *, actor: Actor) -> bool:
        """Lift the lockout of ``name`` and forget its failures; whether there were any. Needs
        Manage users, and an admin for an admin."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            user = repos.users.find(name)
            if user is None:
                raise NotFound("user", name)
            if user.is_admin:
                require_admin(actor.principal, "unlocking an admin")
            forgotten = repos.sign_in_throttles.forget(ACCOUNT, name)
            if forgotten:
                repos.audit.append(
                    at=self._clock.now(),
                    actor=actor.name,
                    action="user.unlocked",
                    resource_kind="user",
                    resource_name=name,
                    detail={},
                    source=actor.source,
                )
        return forgotten

    def locked_accounts(self) -> set[str]:
        """The names whose sign-in is locked (shown to those who may see users)."""
        with self._store.transaction() as repos:
            return repos.sign_in_throttles.locked()

    def _counted(self, name: str, tried: str, source: str) -> _CountedAttempt:
        """Judge the attempt by the counts and count it, in one transaction; judged again when
        another was counted in between. ``TooManyAttempts`` when it is refused."""
        for _ in range(MAX_COUNTING_RACES):
            now = self._clock.now()
            try:
                with self._store.transaction() as repos:
                    judged = self._judge_and_count(repos, name, tried, source, now)
            except _CountedFirst:
                continue
            if isinstance(judged, Refusal):
                raise _too_many(judged, now)
            return judged
        raise TooManyAttempts("too many sign-ins at once; try again in 1 s", retry_after_seconds=1)

    def _judge_and_count(
        self, repos: Repositories, name: str, tried: str, source: str, now: datetime
    ) -> _CountedAttempt | Refusal:
        throttles = repos.sign_in_throttles
        subject = address_subject(source)
        account = throttles.state(ACCOUNT, tried)
        address = throttles.state(ADDRESS, subject)
        refused = self._refusal(account, address, now)
        if refused is not None:
            self._audit(repos, "signin.refused", tried, source, {"reason": refused.reason})
            return refused
        failures = attempts_after(self._account_policy, account, now)
        counted = throttles.claim(
            ACCOUNT, tried, seen=account, failures=failures, at=now
        ) and throttles.claim(
            ADDRESS,
            subject,
            seen=address,
            failures=attempts_after(self._address_policy, address, now),
            at=now,
        )
        if not counted:
            raise _CountedFirst
        record = repos.users.find(name) if tried == name else None
        return _CountedAttempt(record=record, failures=failures)

    def _refusal(
        self,
        account_state: ThrottleState | None,
        address_state: ThrottleState | None,
        now: datetime,
    ) -> Refusal | None:
        account = refusal(self._account_policy, account_state, now, what="account")
        address = refusal(self._address_policy, address_state, now, what="address")
        if account is None or address is None:
            return account or address
        if account.retry_at is None or address.retry_at is None:
            return account if account.retry_at is None else address
        return account if account.retry_at >= address.retry_at else address

    def _succeeded(
        self, record: UserRecord, stored_hash: str, password: str, source: str
    ) -> SignedInUser:
        new_hash = self._passwords.rehashed_if_outdated(stored_hash, password)
        with self._store.transaction() as repos:
            if new_hash is not None:
                repos.users.set_password_hash(record.name, new_hash)
            # The address only takes this attempt back: one good account must not clear its
            # guesses at others.
            repos.sign_in_throttles.forget(ACCOUNT, record.name)
            repos.sign_in_throttles.uncount(ADDRESS, address_subject(source))
            repos.audit.append(
                at=self._clock.now(),
                actor=record.name,
                action="signin.succeeded",
                resource_kind="user",
                resource_name=record.name,
                detail={},
                source=source,
            )
            return SignedInUser(user_id=record.id, principal=principal_of(repos, record))

    def _failed(self, attempt: _CountedAttempt, tried: str, source: str) -> None:
        """Audit a failure (its attempt is counted already), lock an existing account that has
        reached the lockout, and forget counts gone stale."""
        now = self._clock.now()
        stale_before = now - max(self._account_policy.window, self._address_policy.window)
        with self._store.transaction() as repos:
            throttles = repos.sign_in_throttles
            detail: dict[str, object] = {
                "reason": _reason(attempt.record),
                "failures": attempt.failures,
            }
            if attempt.record is not None and self._account_policy.locks_after(attempt.failures):
                throttles.lock(attempt.record.name, now)
                detail["locked"] = True
            throttles.prune(idle_before=stale_before, limit=PRUNED_PER_FAILURE)
            self._audit(repos, "signin.failed", tried, source, detail)

    def _audit(
        self, repos: Repositories, action: str, tried: str, source: str, detail: dict[str, object]
    ) -> None:
        repos.audit.append(
            at=self._clock.now(),
            actor=ANONYMOUS,
            action=action,
            resource_kind="user",
            resource_name=tried,
            detail={"address": source, **detail},
            source=source,
        )


def printable_name(name: str) -> str:
    """``name`` as it may be stored and shown: control characters (which a database may refuse)
    replaced by ``?``, cut to the longest name the store keeps."""
    cleaned = "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in name[:LONGEST_NAME_KEPT])
    return cleaned or "?"


def _reason(record: UserRecord | None) -> str:
    if record is None:
        return "no such user"
    if record.password_hash is None:
        return "the user has no password"
    return "wrong password"


def _too_many(refused: Refusal, now: datetime) -> TooManyAttempts:
    if refused.retry_at is None:
        return TooManyAttempts(
            "this account is locked after too many failed sign-ins; a user manager can unlock it"
        )
    seconds = max(1, math.ceil((refused.retry_at - now).total_seconds()))
    when = refused.retry_at.strftime("%H:%M:%S UTC")
    return TooManyAttempts(
        f"too many failed sign-ins; try again in {seconds} s (at {when})",
        retry_after_seconds=seconds,
    )
