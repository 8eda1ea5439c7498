"""An application's manifest is a snapshot taken at Run. When a rule added since refuses it, the
supervisor fails the submission with the rule's message rather than trying again at every tick."""

from __future__ import annotations

import copy

from sqlalchemy import update

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
