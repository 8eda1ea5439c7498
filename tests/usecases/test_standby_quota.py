"""Run counts a standby driver against the bundle's quotas, on each backend: a job with
``spec.instance.standby`` takes its driver's cores twice, so where the quota leaves room for one
more driver but not two, a second such job is refused (409, naming cores) and a job without a
standby still fits."""

from __future__ import annotations

import httpx
import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.errors import Conflict
from streamjobs.domain.quotas import Quota, QuotaExceeded
from streamjobs.services.applications import ApplicationQuery
from streamjobs.services.container import Services
from tests.api.problems import problem_of
from tests.factories import pipeline_manifest
from tests.live_server import live_server

ADMIN = Actor(Principal("admin", is_admin=True))
WITH_STANDBY = {"standby": True}
"""A single-node pipeline (a 1-core ``small`` driver) that keeps a standby driver."""


@pytest.fixture
def pay(services: Services) -> Services:
    """A bundle ``pay`` of 3 cores, holding the streaming pipelines ``first`` and ``second``
    with a standby driver each and ``plain`` without."""
    services.bundles.create("pay", actor=ADMIN, data_roots=["file:///tmp/out"])
    services.bundles.update("pay", actor=ADMIN, description=None, quota=Quota(max_cores=3))
    for name in ("first", "second"):
        manifest = pipeline_manifest(name, bundle="pay", instance=WITH_STANDBY)
        services.jobs.create(manifest, actor=ADMIN)
    services.jobs.create(pipeline_manifest("plain", bundle="pay"), actor=ADMIN)
    return services


def test_a_standby_driver_is_counted_as_a_second_driver(pay: Services) -> None:
    first = pay.applications.run("first", actor=ADMIN)
    assert (first.cores, first.memory_mb) == (2, 2 * _driver_memory_mb(pay))
    with pytest.raises(QuotaExceeded) as refused:
        pay.applications.run("second", actor=ADMIN)
    assert refused.value.detail == (
        "resource bundle 'pay' quota of 3 cores would be exceeded: "
        "2 in use, this run needs 2 more (4 in all)"
    )
    assert isinstance(refused.value, Conflict)
    assert pay.applications.list(ApplicationQuery(job_name="second"), actor=ADMIN).total == 0
    plain = pay.applications.run("plain", actor=ADMIN)
    assert plain.cores == 1


def test_the_refused_run_is_a_409_problem_naming_cores(pay: Services) -> None:
    token = pay.identity.bootstrap_admin().token
    assert token is not None
    with (
        live_server(pay) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api,
    ):
        assert api.post("/api/v1/jobs/first/run").status_code == 201
        problem = problem_of(api.post("/api/v1/jobs/second/run"), 409)
        assert problem["title"] == "Quota exceeded"
        assert "quota of 3 cores would be exceeded" in problem["detail"]
        assert "this run needs 2 more" in problem["detail"]
        assert api.post("/api/v1/jobs/plain/run").status_code == 201


def _driver_memory_mb(services: Services) -> int:
    """The memory of the ``small`` node type, the pipelines' driver."""
    with services.store.reading() as repos:
        return repos.node_types.sizes()["small"].memory_mb
