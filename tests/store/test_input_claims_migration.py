"""Revision 0013 gives the jobs stored before it the claims of what they read, so that the rules
about checkpoints and other jobs' inputs hold for them too; undone, it takes only those away."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from streamjobs.domain.location_claims import Claim, ClaimKind
from streamjobs.store import Store, migrate
from streamjobs.store.db import MIGRATIONS_DIRECTORY
from tests.factories import changed, pipeline_manifest
from tests.store.conftest import AddJob

OUTPUT = Claim("file:///data/in", False, ClaimKind.OUTPUT, "spec.pipeline.outputs[0].path")


def downgrade_to(engine: Engine, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY).replace("%", "%%"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def test_jobs_stored_before_it_claim_what_they_read(
    store: Store, engine: Engine, add_job: AddJob
) -> None:
    source = {"name": "ticks", "format": "json", "schema": "a INT", "path": "/data/in"}
    reader = changed(pipeline_manifest("reader"), ("spec.pipeline.inputs[0]", source))
    loop = changed(reader, ("spec.pipeline.outputs[0].path", "/data/in"))
    add_job("reader", manifest=reader)
    add_job("loop", manifest=loop)
    add_job("broken", manifest={"metadata": {"name": "broken"}, "spec": {}})
    with store.transaction() as repos:
        repos.claims.replace("reader", [Claim("file:///data/in", False, ClaimKind.INPUT, "f")])
        repos.claims.replace("loop", [OUTPUT])

    downgrade_to(engine, "0012")
    with store.transaction() as repos:
        assert repos.claims.of_job("reader") == []
        assert repos.claims.of_job("loop") == [OUTPUT]
    migrate(engine)

    with store.transaction() as repos:
        assert repos.claims.of_job("reader") == [
            Claim("file:///data/in", False, ClaimKind.INPUT, "spec.pipeline.inputs[0].path")
        ]
        assert repos.claims.of_job("loop") == [OUTPUT]
        assert repos.claims.of_job("broken") == []
