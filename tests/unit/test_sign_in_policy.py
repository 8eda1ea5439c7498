"""The arithmetic of sign-in throttling: free failures, doubling delays up to a cap, a window after
which failures no longer count, and the lockout that waits for someone to lift it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from streamjobs.domain.sign_in_policy import (
    ThrottlePolicy,
    ThrottleState,
    address_subject,
    attempts_after,
    refusal,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
POLICY = ThrottlePolicy(
    free_failures=3,
    base_delay=timedelta(seconds=1),
    max_delay=timedelta(seconds=60),
    window=timedelta(hours=1),
    lockout_failures=10,
)


def test_the_delay_doubles_after_the_free_failures_up_to_the_cap() -> None:
    delays = [POLICY.delay_after(n).total_seconds() for n in range(9)]
    assert delays == [0, 0, 0, 0, 1, 2, 4, 8, 16]
    assert POLICY.delay_after(50) == timedelta(seconds=60)
    assert POLICY.delay_after(10**9) == timedelta(seconds=60)


def test_failures_older_than_the_window_no_longer_count() -> None:
    assert POLICY.counted(7, NOW - timedelta(minutes=59), NOW) == 7
    assert POLICY.counted(7, NOW - timedelta(hours=1), NOW) == 0
    assert POLICY.counted(7, None, NOW) == 0


def test_an_attempt_waits_until_the_last_failure_plus_the_delay() -> None:
    state = ThrottleState(failures=5, last_failure_at=NOW)
    refused = refusal(POLICY, state, NOW + timedelta(seconds=1), what="account")
    assert refused is not None
    assert refused.retry_at == NOW + timedelta(seconds=2)
    assert refused.reason == "account throttled"
    assert refusal(POLICY, state, NOW + timedelta(seconds=2), what="account") is None


def test_the_free_failures_and_no_state_refuse_nothing() -> None:
    assert refusal(POLICY, None, NOW, what="account") is None
    assert refusal(POLICY, ThrottleState(failures=3, last_failure_at=NOW), NOW, what="x") is None


def test_a_lockout_refuses_without_a_time_to_retry_and_outlives_the_window() -> None:
    state = ThrottleState(failures=10, last_failure_at=NOW, locked_at=NOW)
    refused = refusal(POLICY, state, NOW + timedelta(days=30), what="account")
    assert refused is not None
    assert refused.retry_at is None
    assert POLICY.locks_after(10)
    assert not POLICY.locks_after(9)


def test_an_address_policy_never_locks() -> None:
    address = ThrottlePolicy(
        free_failures=10,
        base_delay=timedelta(seconds=1),
        max_delay=timedelta(seconds=60),
        window=timedelta(hours=1),
    )
    assert not address.locks_after(10**6)


def test_reaching_the_lockout_count_refuses_until_the_window_has_passed() -> None:
    """Without ``locked_at``: the lockout attempt is still being checked, or the name is no
    account's (only existing accounts are locked for good)."""
    state = ThrottleState(failures=10, last_failure_at=NOW)
    refused = refusal(POLICY, state, NOW + timedelta(minutes=59), what="account")
    assert refused is not None
    assert refused.reason == "account locked"
    assert refused.retry_at is None
    assert refusal(POLICY, state, NOW + timedelta(hours=1), what="account") is None


def test_an_attempt_counts_one_more_or_starts_again_after_the_window() -> None:
    assert attempts_after(POLICY, None, NOW) == 1
    recent = ThrottleState(failures=4, last_failure_at=NOW - timedelta(minutes=5))
    assert attempts_after(POLICY, recent, NOW) == 5
    old = ThrottleState(failures=4, last_failure_at=NOW - timedelta(hours=2))
    assert attempts_after(POLICY, old, NOW) == 1


@pytest.mark.parametrize(
    ("address", "counted_as"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("::1", "::/64"),
        ("unknown", "unknown"),
        ("testclient", "testclient"),
        ("", ""),
    ],
)
def test_an_ipv6_address_counts_by_its_64_and_others_as_they_are(
    address: str, counted_as: str
) -> None:
    assert address_subject(address) == counted_as
