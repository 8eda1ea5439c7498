"""Column types the store needs beyond SQLAlchemy's own: timestamps that are always UTC.

Kept apart from ``tables.py`` (the rows) because these decide how every timestamp is written and
read on each database, which is where the supervisor's tick and every list spend their parsing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back as a timezone-aware UTC datetime.

    SQLite keeps no offset and PostgreSQL answers in the session's time zone; this type hides both.
    Naive datetimes are refused: the store cannot guess which zone they meant.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()}: the store needs a timezone")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        """On SQLite, parse the stored text with ``datetime.fromisoformat`` (C code) instead of
        SQLAlchemy's regular expression: the supervisor reads ten timestamps of every live
        application each second, and the regular expression was most of that time. On
        PostgreSQL, whose sessions run in UTC (``store.db``), psycopg's datetimes are UTC
        already and pass through one check."""
        if dialect.name == "sqlite":
            return _sqlite_utc
        if dialect.name == "postgresql":
            return _aware_utc
        return super().result_processor(dialect, coltype)


def _aware_utc(value: datetime | None) -> datetime | None:
    """A driver's timezone-aware datetime in UTC (naive ones are taken as UTC)."""
    if value is None or value.tzinfo is UTC:
        return value
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _sqlite_utc(value: str | None) -> datetime | None:
    """SQLite keeps the UTC time without an offset: parse it with one (``datetime.replace``
    costs several times what parsing does); a value that has an offset already is converted."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value + "+00:00")
    except ValueError:
        parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is UTC:
        return parsed
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
