"""Revision 0014 clears the delivery guarantee earlier servers filled into python and jvm jobs,
which are now refused with one, and leaves pipelines and unreadable rows as they were."""

from __future__ import annotations

import copy
from typing import Any

from sqlalchemy import Engine

from streamjobs.domain.spec import parse_manifest
from streamjobs.store import Store, migrate
from tests.factories import pipeline_manifest, python_manifest
from tests.store.conftest import AddJob
from tests.store.test_input_claims_migration import downgrade_to


def with_guarantee(manifest: dict[str, Any], guarantee: str) -> dict[str, Any]:
    stored = copy.deepcopy(manifest)
    stored["spec"]["processing"] = {"guarantee": guarantee}
    return stored


def test_programs_lose_the_guarantee_they_never_had_and_pipelines_keep_theirs(
    store: Store, engine: Engine, add_job: AddJob
) -> None:
    program = with_guarantee(python_manifest("program"), "AT_LEAST_ONCE")
    pipeline = with_guarantee(pipeline_manifest("pipeline"), "EXACTLY_ONCE")
    add_job("program", manifest=program)
    add_job("pipeline", manifest=pipeline)
    add_job("broken", manifest={"metadata": {"name": "broken"}, "spec": []})
    downgrade_to(engine, "0013")

    migrate(engine)

    with store.transaction() as repos:
        program_job = repos.jobs.get("program")
        pipeline_job = repos.jobs.get("pipeline")
        broken_job = repos.jobs.get("broken")
    assert program_job.manifest["spec"]["processing"]["guarantee"] is None
    assert program_job.version == 2
    parse_manifest(program_job.manifest)  # runs again: nothing left to refuse
    assert pipeline_job.manifest == pipeline
    assert pipeline_job.version == 1
    assert broken_job.manifest == {"metadata": {"name": "broken"}, "spec": []}
