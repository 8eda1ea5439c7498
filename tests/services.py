"""Real services the tests run against: PostgreSQL, whose helper lives in streamjobs.devtools
(the bench's figure 4 starts one too)."""

from streamjobs.devtools.postgres import (
    SUPERUSER,
    PostgresServer,
    ServiceUnavailableError,
    find_postgres_bin_dir,
)

__all__ = ["SUPERUSER", "PostgresServer", "ServiceUnavailableError", "find_postgres_bin_dir"]
