"""A person's Stop or Abort of a running application is decided from what the service reads, and
a running driver's reports move the application every few seconds: when one lands between the
read and the write, the Stop or Abort is made again from a fresh read rather than refused with a
409 the person can do nothing about. A change that keeps losing still ends in ``StaleVersion``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Conflict, StaleVersion
from streamjobs.domain.states import AppState
from streamjobs.services.container import Services
from streamjobs.services.resources import FRESH_READ_ATTEMPTS, on_fresh_reads
from tests.factories import pipeline_manifest

ADMIN = Actor(Principal("admin", is_admin=True))
HEARTBEAT = datetime.fromisoformat("2026-01-01T00:00:00+00:00")


class OvertakingClock(FakeClock):
    """A fake clock that, each time it is read, first lets the next queued change land."""

    def __init__(self) -> None:
        super().__init__()
        self.meanwhile: list[Callable[[], None]] = []

    def now(self) -> datetime:
        if self.meanwhile:
            self.meanwhile.pop(0)()
        return super().now()


@pytest.fixture
def clock() -> OvertakingClock:
    return OvertakingClock()


@pytest.fixture
def application_id(services: Services) -> str:
    services.jobs.create(pipeline_manifest("orders"), actor=ADMIN)
    return services.applications.run("orders", actor=ADMIN).id


def a_report_lands(services: Services, application_id: str) -> Callable[[], None]:
    """What a driver's report does to its application, in a transaction of its own."""

    def land() -> None:
        with services.store.transaction() as repos:
            current = repos.applications.get(application_id)
            repos.applications.update(
                application_id, version=current.version, at=HEARTBEAT, last_heartbeat_at=HEARTBEAT
            )

    return land


@pytest.mark.parametrize("request_kind", ["abort", "stop"])
def test_a_report_landing_meanwhile_does_not_refuse_the_request(
    services: Services, clock: OvertakingClock, application_id: str, request_kind: str
) -> None:
    clock.meanwhile.append(a_report_lands(services, application_id))
    if request_kind == "abort":
        changed = services.applications.abort(application_id, actor=ADMIN)
    else:
        changed = services.applications.stop("orders", actor=ADMIN)

    assert not clock.meanwhile
    assert changed.requested == request_kind
    assert changed.state is AppState.TERMINATING
    stored = services.applications.get(application_id, actor=ADMIN).application
    assert (stored.requested, stored.last_heartbeat_at) == (request_kind, HEARTBEAT)


def test_an_abort_overtaken_every_time_ends_in_stale_version(
    services: Services, clock: OvertakingClock, application_id: str
) -> None:
    clock.meanwhile.extend(
        a_report_lands(services, application_id) for _ in range(FRESH_READ_ATTEMPTS)
    )

    with pytest.raises(StaleVersion, match="changed by someone else"):
        services.applications.abort(application_id, actor=ADMIN)

    stored = services.applications.get(application_id, actor=ADMIN).application
    assert (stored.state, stored.requested) == (AppState.STARTING, None)


def test_only_a_stale_version_is_tried_again() -> None:
    tries: list[int] = []

    def refused() -> None:
        tries.append(1)
        raise Conflict("job 'orders' has no live application")

    with pytest.raises(Conflict, match="no live application"):
        on_fresh_reads(refused)

    assert len(tries) == 1
