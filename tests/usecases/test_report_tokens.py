"""Reports are taken only from the driver of an application that has not ended, with that
application's own token: even an application that ended while an older server still kept
ended applications' tokens in the store refuses them."""

from __future__ import annotations

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Unauthenticated
from streamjobs.domain.states import TERMINAL_STATES, AppState
from streamjobs.services.container import Services
from streamjobs.services.identity import token_digest
from streamjobs.store import ApplicationRecord

TOKEN = "the-drivers-own-token"
HEARTBEAT = [{"type": "heartbeat", "sequence": 0}]


def stored(services: Services, clock: FakeClock, state: AppState) -> ApplicationRecord:
    """An application stored as it is, in ``state``, still holding ``TOKEN``'s digest."""
    with services.store.transaction() as repos:
        return repos.applications.add(
            job_name="orders",
            namespace="default",
            bundle="default",
            tags={},
            spec={"metadata": {"name": "orders"}},
            state=state,
            triggered_by="alice",
            run_as="alice",
            at=clock.now(),
            token_hash=token_digest(TOKEN),
        )


def test_a_running_applications_driver_reports_with_its_token(
    services: Services, clock: FakeClock
) -> None:
    application = stored(services, clock, AppState.RUNNING)
    assert services.reports.receive(application.id, TOKEN, HEARTBEAT) == 1
    with pytest.raises(Unauthenticated):
        services.reports.receive(application.id, TOKEN + "x", HEARTBEAT)
    with pytest.raises(Unauthenticated):
        services.reports.receive("app-000000000000", TOKEN, HEARTBEAT)


@pytest.mark.parametrize("ended", sorted(TERMINAL_STATES))
def test_an_ended_application_still_holding_a_token_refuses_it(
    services: Services, clock: FakeClock, ended: AppState
) -> None:
    application = stored(services, clock, ended)
    with pytest.raises(Unauthenticated):
        services.reports.receive(application.id, TOKEN, HEARTBEAT)
    with services.store.reading() as repos:
        assert repos.applications.progress(application.id) == []
        assert repos.applications.get(application.id).last_heartbeat_at is None
