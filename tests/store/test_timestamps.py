"""Timestamps go in as any aware datetime and always come back as aware UTC, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import StatementError

from streamjobs.store import Store

FIVE_HOURS_WEST = timezone(timedelta(hours=-5))
MOMENT = datetime(2026, 3, 1, 7, 30, 15, 123456, tzinfo=FIVE_HOURS_WEST)


@pytest.fixture
def session_time_zone_far_from_utc(engine: Engine) -> None:
    """Make PostgreSQL answer in +05:45, so only a real conversion gives back UTC."""
    if engine.dialect.name != "postgresql":
        return
    with engine.begin() as connection:
        database = connection.exec_driver_sql("SELECT current_database()").scalar_one()
        connection.execute(text(f"ALTER DATABASE \"{database}\" SET timezone TO 'Asia/Kathmandu'"))
    engine.dispose()


def assert_utc(value: datetime | None) -> None:
    assert value is not None
    assert value.tzinfo is UTC
    assert value == MOMENT


@pytest.mark.usefixtures("session_time_zone_far_from_utc")
def test_every_timestamp_comes_back_aware_in_utc(store: Store) -> None:
    with store.transaction() as repos:
        repos.jobs.add(
            name="orders",
            namespace="default",
            description=None,
            bundle="default",
            manifest={},
            tags={},
            actor="alice",
            at=MOMENT,
        )
        assert_utc(repos.users.add("alice", is_admin=False, at=MOMENT).created_at)
        token = repos.tokens.add(
            user_name="alice", name="laptop", token_hash="h", at=MOMENT, expires_at=MOMENT
        )
        repos.tokens.touch(token.id, MOMENT)
        repos.tokens.revoke(token.id, MOMENT)
        assert_utc(repos.bundles.add("payments", MOMENT).created_at)
        repos.audit.append(
            at=MOMENT,
            actor="alice",
            action="a",
            resource_kind="job",
            resource_name="orders",
            detail={},
            source=None,
        )
    with store.transaction() as repos:
        job = repos.jobs.get("orders")
        token_read = repos.tokens.find_by_hash("h")
        assert token_read is not None
        stamps = [
            job.created_at,
            job.updated_at,
            repos.users.get("alice").created_at,
            token_read.created_at,
            token_read.expires_at,
            token_read.last_used_at,
            token_read.revoked_at,
            next(b.created_at for b in repos.bundles.list() if b.name == "payments"),
            repos.audit.list()[0].at,
        ]
    for stamp in stamps:
        assert_utc(stamp)


def test_a_naive_datetime_is_refused(store: Store) -> None:
    with pytest.raises(StatementError, match="naive datetime"), store.transaction() as repos:
        repos.bundles.add("payments", datetime(2026, 3, 1, 7, 30))
