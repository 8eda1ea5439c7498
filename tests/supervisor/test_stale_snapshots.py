"""An application's manifest is a snapshot taken at Run. When a rule added since refuses it, the
supervisor fails the submission with the rule's message rather than trying again at every tick."""

from __future__ import annotations

import copy

from sqlalchemy import update

from streamjobs.domain.bundle_policy import SparkConfPolicy
from streamjobs.store.tables import ApplicationRow
from tests.supervisor.conftest import ALICE, World


def test_a_snapshot_that_no_longer_validates_fails_the_submission(world: World) -> None:
    world.create_job("stale")
    application_id = world.services.applications.run("stale", actor=ALICE).id
    with world.services.store.transaction() as repos:
        stored = copy.deepcopy(repos.applications.spec(application_id))
    stored["spec"]["pipeline"]["inputs"][0]["schema"] = "id BIGINT, ID STRING"
    with world.services.store.engine.begin() as connection:
        connection.execute(
            update(ApplicationRow).where(ApplicationRow.id == application_id).values(spec=stored)
        )

    world.tick()
    world.tick()

    message = world.failed_submission(application_id)
    assert "no longer passes validation" in message
    assert "spec.pipeline.inputs[0].schema" in message
    assert "names column 'ID' twice" in message


def test_a_job_its_bundle_no_longer_allows_fails_the_submission(world: World) -> None:
    """Data roots taken away after the Run: the next attempt is refused before any driver, with
    the field and the rule, rather than left to the sandbox's permission errors."""
    world.create_job("narrowed")
    application_id = world.services.applications.run("narrowed", actor=ALICE).id
    world.services.bundles.set_policy(
        "default", actor=ALICE, data_roots=[], spark_conf=SparkConfPolicy()
    )

    world.tick()
    world.tick()

    message = world.failed_submission(application_id)
    assert "no longer fits its bundle" in message
    assert "spec.pipeline.outputs[0]" in message
