"""Alembic migrations of the store's schema, run by ``streamjobs.store.db.migrate``."""
