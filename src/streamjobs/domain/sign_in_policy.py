"""How failed sign-ins slow further attempts down and lock an account, as pure arithmetic.

Password guessing is limited twice: per account (whoever tries it, from wherever) and per address
(whichever accounts it tries; an IPv6 address counts by its /64, the block one host is usually
given). After ``free_failures`` failures each further attempt must wait a delay that doubles with
every failure, up to ``max_delay``; after ``lockout_failures`` no attempt is let through, and an
existing account stays locked until someone lifts it. Failures older than ``window`` (with none
since) no longer count. The store keeps the counts; this module only says what they mean.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime, timedelta

IPV6_HOST_PREFIX = 64
"""An IPv6 host is given a whole /64: counting its addresses one by one would count nothing."""

MAX_DOUBLINGS = 40
"""More doublings than any delay needs; keeps the factor from growing without bound."""


@dataclass(frozen=True)
class ThrottlePolicy:
    """The delays (and, for accounts, the lockout) that failed sign-ins earn."""

    free_failures: int
    base_delay: timedelta
    max_delay: timedelta
    window: timedelta
    lockout_failures: int | None = None
    """None: never locks (addresses are only slowed down: many people may share one)."""

    def counted(self, failures: int, last_failure_at: datetime | None, now: datetime) -> int:
        """The failures that still count at ``now``: none once the window has passed."""
        if last_failure_at is None or now - last_failure_at >= self.window:
            return 0
        return failures

    def delay_after(self, failures: int) -> timedelta:
        """How long the next attempt must wait after ``failures`` counted failures."""
        over = failures - self.free_failures
        if over <= 0:
            return timedelta(0)
        doublings = min(over - 1, MAX_DOUBLINGS)
        return min(self.base_delay * (1 << doublings), self.max_delay)

    def locks_after(self, failures: int) -> bool:
        """Whether ``failures`` counted failures lock the account."""
        return self.lockout_failures is not None and failures >= self.lockout_failures


@dataclass(frozen=True)
class ThrottleState:
    """What the store knows of one account's or one address's failures."""

    failures: int
    last_failure_at: datetime | None
    locked_at: datetime | None = None


@dataclass(frozen=True)
class Refusal:
    """Why an attempt is refused before its password is checked; ``retry_at`` is None for a
    lockout, which waits for an admin."""

    reason: str
    retry_at: datetime | None


def refusal(
    policy: ThrottlePolicy, state: ThrottleState | None, now: datetime, *, what: str
) -> Refusal | None:
    """Why ``state`` (of ``what``: "account" or "address") refuses an attempt at ``now``, if
    it does."""
    if state is None:
        return None
    if state.locked_at is not None:
        return Refusal(reason=f"{what} locked", retry_at=None)
    failures = policy.counted(state.failures, state.last_failure_at, now)
    if failures == 0 or state.last_failure_at is None:
        return None
    if policy.locks_after(failures):
        # The attempt that reached the lockout is still being checked, or the name is no
        # account's: either way nothing more gets through while these failures count.
        return Refusal(reason=f"{what} locked", retry_at=None)
    retry_at = state.last_failure_at + policy.delay_after(failures)
    if retry_at > now:
        return Refusal(reason=f"{what} throttled", retry_at=retry_at)
    return None


def attempts_after(policy: ThrottlePolicy, state: ThrottleState | None, now: datetime) -> int:
    """The count once one more attempt is counted at ``now`` (older ones forgotten)."""
    if state is None:
        return 1
    return policy.counted(state.failures, state.last_failure_at, now) + 1


def address_subject(address: str) -> str:
    """What failures from ``address`` are counted under: an IPv4 address (an IPv4-mapped IPv6
    one too) as it is, an IPv6 address by its /64, anything else (no address) as given."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_HOST_PREFIX}", strict=False))
    return str(parsed)
