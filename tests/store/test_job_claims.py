"""The locations jobs claim: replaced with the job, gone with it, found at, above and below a
location by indexed lookups; existing jobs get theirs when the store is migrated."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from streamjobs.domain.location_claims import Claim, ClaimKind
from streamjobs.store import Store, migrate
from streamjobs.store.db import MIGRATIONS_DIRECTORY
from streamjobs.store.tables import JobClaimRow
from tests.factories import pipeline_manifest
from tests.store.conftest import AddJob, CountRows

OUT = Claim("file:///data/out", False, ClaimKind.OUTPUT, "spec.pipeline.outputs[0].path")
CHECKPOINT = Claim("file:///data/cp/a", False, ClaimKind.CHECKPOINT, "f")
DERIVED = Claim("/default/a", True, ClaimKind.CHECKPOINT, "f")


def test_a_jobs_claims_are_replaced_with_it_and_go_with_it(
    store: Store, add_job: AddJob, count_rows: CountRows
) -> None:
    add_job("a")
    with store.transaction() as repos:
        repos.claims.replace("a", [OUT, DERIVED])
    with store.transaction() as repos:
        assert repos.claims.of_job("a") == [DERIVED, OUT]
        repos.claims.replace("a", [CHECKPOINT])
    with store.transaction() as repos:
        assert repos.claims.of_job("a") == [CHECKPOINT]
        repos.jobs.delete("a")
    assert count_rows(JobClaimRow) == 0


def test_claims_are_found_at_and_below_a_location_for_other_jobs_only(
    store: Store, add_job: AddJob
) -> None:
    add_job("a", bundle="default")
    add_job("b")
    with store.transaction() as repos:
        repos.claims.replace("a", [OUT, CHECKPOINT, DERIVED])
        repos.claims.replace("b", [Claim("file:///data/outside", False, ClaimKind.OUTPUT, "f")])
    with store.reading() as repos:
        found = repos.claims.at(["file:///data/out", "file:///data"], derived=False, other_than="b")
        assert [(holder.job, holder.bundle, holder.claim) for holder in found] == [
            ("a", "default", OUT)
        ]
        assert repos.claims.at(["file:///data/out"], derived=False, other_than="a") == []
        below = repos.claims.below("file:///data", derived=False, other_than="nobody")
        assert [holder.claim.location for holder in below] == [
            "file:///data/cp/a",
            "file:///data/out",
            "file:///data/outside",
        ]
        assert repos.claims.below("file:///data/out", derived=False, other_than="b") == []
        checkpoints = repos.claims.below(
            "file:///", derived=False, other_than="b", kinds=[ClaimKind.CHECKPOINT]
        )
        assert [holder.claim for holder in checkpoints] == [CHECKPOINT]
        derived = repos.claims.below("", derived=True, other_than="b")
        assert [holder.claim for holder in derived] == [DERIVED]


def test_below_takes_its_location_literally(store: Store, add_job: AddJob) -> None:
    add_job("a")
    with store.transaction() as repos:
        repos.claims.replace("a", [Claim("file:///data/abc/x", False, ClaimKind.OUTPUT, "f")])
    with store.reading() as repos:
        for pattern in ("file:///data/a%", "file:///data/a_c", "file:///data/%"):
            assert repos.claims.below(pattern, derived=False, other_than="b") == []


def test_migrating_claims_the_locations_of_the_jobs_stored_before(
    store: Store, engine: Engine, add_job: AddJob
) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY).replace("%", "%%"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0008")
    written = pipeline_manifest("written")
    written["spec"]["pipeline"]["streaming"]["checkpointLocation"] = "/data/cp/written"
    add_job("written", manifest=written)
    add_job("derived", manifest=pipeline_manifest("derived"))
    add_job("broken", manifest={"metadata": {"name": "broken"}, "spec": {"bundle": "default"}})
    migrate(engine)
    with store.reading() as repos:
        assert repos.claims.of_job("written") == [
            Claim(
                "file:///data/cp/written",
                False,
                ClaimKind.CHECKPOINT,
                "spec.pipeline.streaming.checkpointLocation",
            ),
            Claim(
                "file:///tmp/out/written/evens",
                False,
                ClaimKind.OUTPUT,
                "spec.pipeline.outputs[0].path",
            ),
        ]
        assert repos.claims.of_job("derived")[0] == Claim(
            "/default/derived",
            True,
            ClaimKind.CHECKPOINT,
            "spec.pipeline.streaming.checkpointLocation",
        )
        assert repos.claims.of_job("broken") == []
