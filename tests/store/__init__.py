"""The store suite: one set of tests, run on SQLite and on a real PostgreSQL."""
