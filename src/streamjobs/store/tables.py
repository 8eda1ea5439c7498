"""The store's tables, as SQLAlchemy 2 declarative classes.

These classes describe the schema for the repositories and for Alembic's model/migration
comparison; the schema itself is created only by the migrations in ``store/migrations``. Nothing
outside ``streamjobs.store`` sees these rows: repositories turn them into frozen records.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAME_LENGTH = 255
"""Longest name (job, user, bundle, token…) the store accepts, matching the manifest rule."""

NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
}
"""Constraint names are predictable, so later migrations (and SQLite batch mode) can name them."""


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


AUDIT_ID = BigInteger().with_variant(Integer(), "sqlite")
"""A 64-bit key on PostgreSQL; on SQLite only INTEGER primary keys autoincrement."""


class Base(DeclarativeBase):
    """Base of every table, sharing one metadata with the naming convention above."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class JobRow(Base):
    """A streaming job: its validated manifest and what the store knows about it."""

    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    namespace: Mapped[str] = mapped_column(String(NAME_LENGTH))
    description: Mapped[str | None] = mapped_column(Text)
    bundle: Mapped[str] = mapped_column(String(NAME_LENGTH), index=True)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    desired_state: Mapped[str] = mapped_column(
        String(32), default="STOPPED", server_default="STOPPED"
    )
    status: Mapped[str] = mapped_column(
        String(32), default="Idle", server_default="Idle", index=True
    )
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class JobTagRow(Base):
    """One ``key: value`` tag of a job, kept apart from the manifest so lists can filter on it."""

    __tablename__ = "job_tags"
    __table_args__ = (Index("ix_job_tags_key_value", "key", "value"),)

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    value: Mapped[str] = mapped_column(String(NAME_LENGTH))


class ConnectionRow(Base):
    """A named connection to a data system: its validated manifest and what the store knows."""

    __tablename__ = "connections"
    __table_args__ = (UniqueConstraint("name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    namespace: Mapped[str] = mapped_column(String(NAME_LENGTH))
    type: Mapped[str] = mapped_column(String(32), index=True)
    description: Mapped[str | None] = mapped_column(Text)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    tags: Mapped[dict[str, str]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class UserRow(Base):
    """A person or service account that can hold access tokens."""

    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    password_hash: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    is_admin: Mapped[bool]
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class AccessTokenRow(Base):
    """An access token of a user; only a hash of the secret is ever stored."""

    __tablename__ = "access_tokens"
    __table_args__ = (UniqueConstraint("user_id", "name"), UniqueConstraint("token_hash"))

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    token_hash: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class NodeTypeRow(Base):
    """A named driver or executor size."""

    __tablename__ = "node_types"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    cores: Mapped[int]
    memory_mb: Mapped[int]


class ResourceBundleRow(Base):
    """A named group of jobs (quotas and permission grants come later)."""

    __tablename__ = "resource_bundles"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class AuditEntryRow(Base):
    """One line of the append-only audit log: who did what to which resource, and when."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(AUDIT_ID, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    actor: Mapped[str] = mapped_column(String(NAME_LENGTH))
    action: Mapped[str] = mapped_column(String(64))
    resource_kind: Mapped[str] = mapped_column(String(64))
    resource_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    source: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
