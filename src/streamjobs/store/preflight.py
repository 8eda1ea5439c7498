"""What the server checks about its store before it migrates or serves anything.

Migrating blindly turns mistakes into quiet damage: a 0-byte ``streamjobs.db`` (a failed copy, a
full disk at backup time) would become an empty store, a server pointed at another program's
database would add its tables to it, and one from a newer streamjobs would fail half-way or be
misread. Each of these stops the start with ``StoreUnusable`` saying what to do. A database
that does not exist yet, or holds nothing, is still a fresh store to initialise.

A SQLite file is the store's alone, so any table in it that is not ours makes it foreign. A
PostgreSQL database is a server's, shared with what else its owner put there (PostGIS's
``spatial_ref_sys``, another program's tables): only tables named like ours without a schema
version (a half-made or foreign streamjobs-like schema), or a schema version this code does not
know, stop the start there.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import Engine, func, inspect, select, text
from sqlalchemy.exc import DBAPIError

from streamjobs.domain.errors import StoreUnusable
from streamjobs.store.db import MIGRATIONS_DIRECTORY
from streamjobs.store.outages import translated_outages
from streamjobs.store.tables import Base, SecretRow

VERSION_TABLE = "alembic_version"
STREAMJOBS_TABLE = "jobs"
"""A table every streamjobs schema has had, to tell a newer store from another program's."""


def check_store_file(database: Path) -> None:
    """Raise ``StoreUnusable`` when there is something at a SQLite store's path, but no database:
    to be called before the server creates the file itself (empty, to choose its mode)."""
    if not database.exists():
        return
    if not database.is_file():
        raise StoreUnusable(f"{database} is not a file: the store must be a SQLite file there")
    if database.stat().st_size == 0:
        raise StoreUnusable(
            f"{database} is an empty file where the store was expected (nothing is in it, not "
            "even an empty store): remove it to start afresh, or restore the store from a backup"
        )


def check_store(engine: Engine) -> None:
    """Raise ``StoreUnusable`` unless ``engine``'s database is empty or a streamjobs store this
    code can migrate; ``StoreUnavailable`` when it cannot be reached at all."""
    where = _described(engine)
    database = _sqlite_file(engine)
    with translated_outages():
        try:
            tables = set(inspect(engine).get_table_names())
            revisions = _revisions(engine) if VERSION_TABLE in tables else []
        except DBAPIError as error:
            code = getattr(error.orig, "sqlite_errorcode", 0)
            if database is None or code != sqlite3.SQLITE_NOTADB:
                raise
            raise StoreUnusable(
                f"{database} is not a SQLite database: point STREAMJOBS_DATABASE_URL (or "
                "STREAMJOBS_HOME) at the streamjobs store, or move the file away to start afresh"
            ) from None
    considered = tables - {VERSION_TABLE}
    shared = engine.dialect.name == "postgresql"
    if shared:
        considered &= set(Base.metadata.tables)
    if not considered and not revisions:
        return
    if VERSION_TABLE not in tables:
        unversioned = _half_made if shared else _foreign
        raise StoreUnusable(unversioned(where, considered))
    known = {script.revision for script in _scripts().walk_revisions()}
    unknown = [revision for revision in revisions if revision not in known]
    if not unknown:
        return
    if STREAMJOBS_TABLE not in tables:
        raise StoreUnusable(_foreign(where, tables))
    raise StoreUnusable(
        f"{where} has a schema from a newer streamjobs (revision {', '.join(unknown)}, which "
        "this version does not know): run the streamjobs version that made it, or restore a "
        "backup made by this one"
    )


def holds_sealed_secrets(engine: Engine) -> bool:
    """Whether the (migrated) store holds any sealed secret."""
    with translated_outages(), engine.connect() as connection:
        return bool(connection.scalar(select(func.count()).select_from(SecretRow)))


def _foreign(where: str, tables: set[str]) -> str:
    return (
        f"{where} holds tables that are not a streamjobs store ({_shown(tables)}): point "
        "STREAMJOBS_DATABASE_URL at the streamjobs store or at an empty database"
    )


def _half_made(where: str, tables: set[str]) -> str:
    return (
        f"{where} holds tables named like a streamjobs store's ({_shown(tables)}) but no record "
        "of their schema version (alembic_version), so they are half-made or another program's: "
        "point STREAMJOBS_DATABASE_URL at the streamjobs store or at a database without them"
    )


def _shown(tables: set[str]) -> str:
    return ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")


def _revisions(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return [
            str(row[0])
            for row in connection.execute(text("SELECT version_num FROM alembic_version"))
        ]


def _scripts() -> ScriptDirectory:
    return ScriptDirectory(str(MIGRATIONS_DIRECTORY))


def _sqlite_file(engine: Engine) -> Path | None:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database).expanduser()


def _described(engine: Engine) -> str:
    database = _sqlite_file(engine)
    if database is not None:
        return str(database)
    return f"the database {engine.url.render_as_string(hide_password=True)}"
