"""Alembic's entry point for the store's migrations.

Migrations run only through ``streamjobs.store.db.migrate(engine)``, which hands over an open
connection in ``config.attributes["connection"]``; no ``alembic.ini`` is needed.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from streamjobs.store.tables import Base


def run_migrations(connection: Connection) -> None:
    """Run the pending migrations on ``connection``, inside the transaction it already has."""
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def given_connection() -> Connection:
    """The connection ``migrate()`` passed in; offline (SQL script) mode is not supported."""
    connection = context.config.attributes.get("connection")
    if context.is_offline_mode() or not isinstance(connection, Connection):
        raise RuntimeError(
            "streamjobs migrations run through streamjobs.store.db.migrate(engine), "
            "which passes an open connection"
        )
    return connection


run_migrations(given_connection())
