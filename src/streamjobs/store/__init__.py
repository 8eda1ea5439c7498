"""The metadata store: jobs and their applications, connections, users, access tokens, node
types, bundles, secrets (as ciphertext), the audit log.

SQLite (WAL mode) by default, PostgreSQL when the database URL says so. Open it with
``Store.open(url)`` (or ``create_engine_for`` + ``migrate`` + ``Store``) and work inside
``store.transaction()``; repositories return frozen records, never ORM objects.
"""

from streamjobs.store.application_history import (
    ApplicationEventRecord,
    ApplicationHistory,
    AttemptRecord,
)
from streamjobs.store.application_reports import ExecutorFiguresRecord, ProgressRecord
from streamjobs.store.applications import ApplicationRecord, ApplicationRepository
from streamjobs.store.audit import AuditEntry, AuditRepository
from streamjobs.store.catalog import (
    BundleRecord,
    BundleRepository,
    NodeTypeRecord,
    NodeTypeRepository,
)
from streamjobs.store.connections import ConnectionRecord, ConnectionRepository
from streamjobs.store.db import Repositories, Store, create_engine_for, migrate
from streamjobs.store.identity import TokenRecord, TokenRepository, UserRecord, UserRepository
from streamjobs.store.job_statements import JobFilters
from streamjobs.store.jobs import JobRecord, JobRepository
from streamjobs.store.latest_runs import LatestRun
from streamjobs.store.list_filters import TagFilter
from streamjobs.store.secrets import SecretRecord, SecretRepository

__all__ = [
    "ApplicationEventRecord",
    "ApplicationHistory",
    "ApplicationRecord",
    "ApplicationRepository",
    "AttemptRecord",
    "AuditEntry",
    "AuditRepository",
    "BundleRecord",
    "BundleRepository",
    "ConnectionRecord",
    "ConnectionRepository",
    "ExecutorFiguresRecord",
    "JobFilters",
    "JobRecord",
    "JobRepository",
    "LatestRun",
    "NodeTypeRecord",
    "NodeTypeRepository",
    "ProgressRecord",
    "Repositories",
    "SecretRecord",
    "SecretRepository",
    "Store",
    "TagFilter",
    "TokenRecord",
    "TokenRepository",
    "UserRecord",
    "UserRepository",
    "create_engine_for",
    "migrate",
]
