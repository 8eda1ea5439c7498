"""The store's tables, as SQLAlchemy 2 declarative classes.

These classes describe the schema for the repositories and for Alembic's model/migration
comparison; the schema itself is created only by the migrations in ``store/migrations``. Nothing
outside ``streamjobs.store`` sees these rows: repositories turn them into frozen records.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from streamjobs.store.column_types import UtcDateTime

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


class JobClaimRow(Base):
    """A location one job writes (an output or its checkpoint) or reads, so that no other job
    writes, shares or reads its checkpoint, nor checkpoints where it reads, without reading every
    manifest."""

    __tablename__ = "job_claims"

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    location: Mapped[str] = mapped_column(Text, primary_key=True, index=True)
    """A normalized URI; for a checkpoint the server derives, its path under the checkpoint root
    (``/<namespace>/<name>``), so it follows the root wherever the settings put it."""
    derived: Mapped[bool] = mapped_column(Boolean)
    kind: Mapped[str] = mapped_column(String(16))
    """``output``, ``checkpoint`` or ``input``."""
    field: Mapped[str] = mapped_column(String(NAME_LENGTH))
    """The manifest field that names it."""


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
    kind: Mapped[str] = mapped_column(String(32), default="user", server_default="user")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class GroupRow(Base):
    """A named group of users; grants to a group are grants to each member."""

    __tablename__ = "groups"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class GroupMemberRow(Base):
    __tablename__ = "group_members"

    group_name: Mapped[str] = mapped_column(
        ForeignKey("groups.name", ondelete="CASCADE"), primary_key=True
    )
    user_name: Mapped[str] = mapped_column(
        ForeignKey("users.name", ondelete="CASCADE"), primary_key=True, index=True
    )


class DomainGrantRow(Base):
    """A domain permission (Create Spark Job, Manage bundles, Manage users) of a user or group."""

    __tablename__ = "domain_grants"

    subject_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject_name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    permission: Mapped[str] = mapped_column(String(32), primary_key=True)


class BundleGrantRow(Base):
    """A permission (VIEW, RUN, UPDATE, DELETE) on a bundle's jobs, granted to a user or group."""

    __tablename__ = "bundle_grants"

    bundle: Mapped[str] = mapped_column(
        ForeignKey("resource_bundles.name", ondelete="CASCADE"), primary_key=True
    )
    subject_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject_name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    permission: Mapped[str] = mapped_column(String(16), primary_key=True)


class ServiceAccountGrantRow(Base):
    """Lets a user or group run jobs as a service account (``runAs``)."""

    __tablename__ = "service_account_grants"

    service_account: Mapped[str] = mapped_column(
        ForeignKey("users.name", ondelete="CASCADE"), primary_key=True
    )
    subject_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject_name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)


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
    """A named group of jobs with its quotas (None: no limit); its grants are in bundle_grants."""

    __tablename__ = "resource_bundles"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    description: Mapped[str | None] = mapped_column(Text)
    max_running_applications: Mapped[int | None]
    max_cores: Mapped[int | None]
    max_memory_mb: Mapped[int | None]
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """Bumped by every change of the description, the quotas, the data roots, the Spark setting
    policy or the grants."""
    data_roots: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True))
    """Normalized URIs; NULL when never set (the ``default`` bundle's are seeded on start)."""
    spark_conf_allowed: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    spark_conf_refused: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")


class SecretRow(Base):
    """A named secret of a bundle: its value only as ciphertext, sealed by the server's key."""

    __tablename__ = "secrets"
    __table_args__ = (UniqueConstraint("bundle", "name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    bundle: Mapped[str] = mapped_column(ForeignKey("resource_bundles.name", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


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


APPLICATION_NAME_LENGTH = NAME_LENGTH + 21
"""A job name, a dash and a run number of up to 20 digits."""


class ApplicationRow(Base):
    """One run of a job: the snapshot of the job it started with, its state and its counters.

    ``live_key`` holds the job name while the application is live (LIVE_STATES) and NULL
    otherwise; its unique constraint lets the database itself refuse a second live application
    of a job. ``job_name`` has no foreign key: an application outlives its job as history.
    """

    __tablename__ = "applications"
    __table_args__ = (
        UniqueConstraint("job_name", "run_number"),
        UniqueConstraint("live_key"),
        UniqueConstraint("token_hash"),
        Index("ix_applications_job_name_created_at", "job_name", "created_at"),
        Index("ix_applications_created_at_run_number_id", "created_at", "run_number", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(APPLICATION_NAME_LENGTH))
    run_number: Mapped[int]
    job_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    namespace: Mapped[str] = mapped_column(String(NAME_LENGTH))
    bundle: Mapped[str] = mapped_column(String(NAME_LENGTH))
    tags: Mapped[dict[str, str]] = mapped_column(JSON)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(32), index=True)
    live_key: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    triggered_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    run_as: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    transition_time: Mapped[datetime] = mapped_column(UtcDateTime)
    last_update_time: Mapped[datetime] = mapped_column(UtcDateTime)
    submission_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    execution_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    restarts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    submission_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    execution_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    driver_state: Mapped[str | None] = mapped_column(String(32))
    executors_running: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    executors_pending: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    exit_code: Mapped[int | None]
    error_message: Mapped[str | None] = mapped_column(Text)
    requested: Mapped[str | None] = mapped_column(String(16))
    requested_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    requested_by: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    running_since: Mapped[datetime | None] = mapped_column(UtcDateTime)
    last_heartbeat_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    spark_app_id: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    token_hash: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    latest: Mapped[dict[str, Any]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    cores: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    memory_mb: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    job_version: Mapped[int | None] = mapped_column(Integer)


class ApplicationAttemptRow(Base):
    """One submission of an application's driver, and how to find its process again."""

    __tablename__ = "application_attempts"

    application_id: Mapped[str] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    pid: Mapped[int | None]
    process_started_at: Mapped[float | None] = mapped_column(Double)
    directory: Mapped[str] = mapped_column(Text)
    ui_port: Mapped[int | None]
    master: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    submitted_at: Mapped[datetime] = mapped_column(UtcDateTime)
    running_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    exit_code: Mapped[int | None]
    outcome: Mapped[str | None] = mapped_column(String(32))
    fence: Mapped[str | None] = mapped_column(String(64))
    submission_id: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """The standalone master's id of a cluster-mode driver."""
    driver_host: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """Where the driver's UI and REST API answer (None: 127.0.0.1)."""
    launched_on: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """The server host that started a local or client-mode driver."""
    standby: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Started as a standby driver: held ready, not the latest attempt until promoted."""
    promoted_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    token_hash: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """A standby driver's report token (a digest): the application's once it is promoted."""


class ApplicationEventRow(Base):
    """One line of an application's story: submitted, driver running, restarting…"""

    __tablename__ = "application_events"
    __table_args__ = (Index("ix_application_events_application_id_id", "application_id", "id"),)

    id: Mapped[int] = mapped_column(AUDIT_ID, primary_key=True, autoincrement=True)
    application_id: Mapped[str] = mapped_column(ForeignKey("applications.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    kind: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)


class ApplicationProgressRow(Base):
    """One event the runner reported (query started, progress, idle, terminated, heartbeat…).

    ``sequence`` is the runner's own count of its events in one attempt; the unique constraint
    on it makes a batch the runner sends twice land once.
    """

    __tablename__ = "application_progress"
    __table_args__ = (
        UniqueConstraint("application_id", "attempt", "sequence"),
        Index("ix_application_progress_application_id_id", "application_id", "id"),
    )

    id: Mapped[int] = mapped_column(AUDIT_ID, primary_key=True, autoincrement=True)
    application_id: Mapped[str] = mapped_column(ForeignKey("applications.id", ondelete="CASCADE"))
    attempt: Mapped[int]
    sequence: Mapped[int] = mapped_column(BigInteger)
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    type: Mapped[str] = mapped_column(String(64))
    query_id: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)


class ApplicationExecutorsRow(Base):
    """The latest snapshot of an application's executor figures; each snapshot replaces the last."""

    __tablename__ = "application_executors"

    application_id: Mapped[str] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    figures: Mapped[dict[str, Any]] = mapped_column(JSON)
