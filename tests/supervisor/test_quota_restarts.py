"""A restart is the same application: it is never counted twice against its bundle's quota, and a
full bundle does not stop it; a new Run meanwhile is refused."""

from __future__ import annotations

import pytest

from streamjobs.domain.quotas import Demand, Quota, QuotaExceeded
from streamjobs.domain.states import AppState
from tests.supervisor.conftest import ALICE, World


def test_restarts_do_not_count_twice(world: World) -> None:
    world.services.bundles.create(
        "pay", actor=ALICE, quota=Quota(max_running_applications=1), data_roots=["/tmp/out"]
    )
    policy = {"type": "Always", "onFailureRetryInterval": 1}
    world.create_job("ticks", bundle="pay", restartPolicy=policy)
    world.create_job("other", bundle="pay")
    application = world.services.applications.run("ticks", actor=ALICE)
    world.tick()
    world.report(application.id, {"type": "driver", "sparkApplicationId": "local-1"})
    world.tick()
    for restart in (1, 2):
        world.launcher.exit(-1, 137)
        world.tick()
        assert world.app(application.id).state is AppState.PENDING_RERUN
        world.tick(1)
        assert world.app(application.id).restarts == restart
        assert world.app(application.id).state is AppState.STARTING
        with world.services.store.transaction() as repos:
            assert repos.applications.demand_in_bundle("pay") == Demand(1, 1, 1024)
        with pytest.raises(QuotaExceeded, match="1 in use"):
            world.services.applications.run("other", actor=ALICE)
        world.report(application.id, {"type": "driver", "sparkApplicationId": f"local-{restart}"})
        world.tick()
        assert world.app(application.id).state is AppState.RUNNING
    assert len(world.launcher.drivers) == 3
