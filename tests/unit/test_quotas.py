"""What a job takes and whether a bundle's quotas let it start."""

from __future__ import annotations

import pytest

from streamjobs.domain.quotas import (
    Demand,
    NodeSize,
    Quota,
    QuotaExceeded,
    application_demand,
    check_quota,
)

SIZES = {"small": NodeSize(1, 1024), "medium": NodeSize(2, 4096)}


def test_a_single_node_job_takes_its_driver() -> None:
    demand = application_demand(driver="small", executor=None, executors=None, node_types=SIZES)
    assert demand == Demand(applications=1, cores=1, memory_mb=1024)


def test_a_standard_job_takes_its_driver_and_every_executor() -> None:
    demand = application_demand(driver="small", executor="medium", executors=3, node_types=SIZES)
    assert demand == Demand(applications=1, cores=7, memory_mb=1024 + 3 * 4096)


def test_no_quota_lets_anything_start() -> None:
    check_quota("pay", Quota(), Demand(100, 1000, 10**6), Demand(1, 1, 1))


def test_the_application_over_the_running_quota_is_refused_with_the_figures() -> None:
    quota = Quota(max_running_applications=2)
    check_quota("pay", quota, Demand(1, 1, 1024), Demand(1, 1, 1024))
    with pytest.raises(QuotaExceeded) as refused:
        check_quota("pay", quota, Demand(2, 2, 2048), Demand(1, 1, 1024))
    assert refused.value.detail == (
        "resource bundle 'pay' quota of 2 running applications would be exceeded: "
        "2 in use, this run needs 1 more (3 in all)"
    )


def test_cores_and_memory_are_checked_too() -> None:
    with pytest.raises(QuotaExceeded, match="quota of 4 cores would be exceeded: 3 in use"):
        check_quota("pay", Quota(max_cores=4), Demand(1, 3, 0), Demand(1, 2, 0))
    with pytest.raises(QuotaExceeded, match="quota of 2048 MB memory"):
        check_quota("pay", Quota(max_memory_mb=2048), Demand(1, 1, 1024), Demand(1, 1, 1025))
    check_quota("pay", Quota(max_cores=4), Demand(1, 2, 0), Demand(1, 2, 0))


def test_a_zero_quota_lets_nothing_start() -> None:
    with pytest.raises(QuotaExceeded):
        check_quota("frozen", Quota(max_running_applications=0), Demand(), Demand(1, 1, 1))
