"""``spec.instance``: the deploy mode and dynamic allocation fields and their rules (each bad input
names its field), what a dynamic job's quota and pending executors count, which dynamic
allocation settings a job may tune, and the cluster settings that keep standard jobs from
running."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.cluster_addresses import (
    cluster_address_problems,
    is_loopback,
    master_addresses,
    remote_master,
)
from streamjobs.domain.deployment_rules import cluster_settings_errors
from streamjobs.domain.instance import DeployMode
from streamjobs.domain.quotas import NodeSize, application_demand
from streamjobs.domain.spark_policy import refused_setting_reason
from streamjobs.supervisor.terms import ApplicationTerms
from tests.unit.manifests import (
    assert_error,
    changed,
    errors_of,
    parse,
    pipeline_manifest,
    python_manifest,
)

INSTANCE = "spec.instance"
REMOTE_MASTER = "spark://10.20.0.2:7077"


def standard(**instance: Any) -> dict[str, Any]:
    return changed(pipeline_manifest(), (INSTANCE, {"deployment": "standard", **instance}))


def test_a_standard_job_runs_its_driver_in_client_mode_with_fixed_executors() -> None:
    instance = parse(standard()).spec.instance
    assert instance.deploy_mode is DeployMode.CLIENT
    assert not instance.in_cluster_mode
    assert instance.dynamic is False
    assert (instance.min_executors, instance.initial_executors) == (None, None)
    assert parse(standard(deployMode="cluster")).spec.instance.in_cluster_mode


def test_a_dynamic_job_takes_its_bounds() -> None:
    instance = parse(
        standard(dynamic=True, executors=4, minExecutors=1, initialExecutors=2)
    ).spec.instance
    assert (instance.min_executors, instance.initial_executors, instance.executors) == (1, 2, 4)
    assert parse(standard(dynamic=True, executors=3, minExecutors=3)).spec.instance.dynamic


@pytest.mark.parametrize(
    ("instance", "path", "message"),
    [
        ({"deployMode": "cluster"}, "deployMode", "for deployment standard only"),
        ({"minExecutors": 1}, "minExecutors", "for deployment standard only"),
        ({"initialExecutors": 0}, "initialExecutors", "for deployment standard only"),
    ],
    ids=["deploy-mode", "min", "initial"],
)
def test_single_node_jobs_have_no_standard_fields(
    instance: dict[str, Any], path: str, message: str
) -> None:
    manifest = changed(python_manifest(), (INSTANCE, {"deployment": "singleNode", **instance}))
    errors = errors_of(manifest)
    assert [error.path for error in errors] == [f"{INSTANCE}.{path}"]
    assert message in errors[0].message
    assert "this job is singleNode" in errors[0].message


@pytest.mark.parametrize(
    ("instance", "path", "message"),
    [
        ({"minExecutors": 1}, "minExecutors", "needs dynamic allocation"),
        (
            {"dynamic": False, "initialExecutors": 1},
            "initialExecutors",
            "set spec.instance.dynamic",
        ),
        (
            {"dynamic": True, "executors": 2, "minExecutors": 3},
            "minExecutors",
            "3 is more than spec.instance.executors (2)",
        ),
        (
            {"dynamic": True, "executors": 2, "initialExecutors": 5},
            "initialExecutors",
            "5 is not between minExecutors (0) and executors (2)",
        ),
        (
            {"dynamic": True, "executors": 4, "minExecutors": 2, "initialExecutors": 1},
            "initialExecutors",
            "1 is not between minExecutors (2) and executors (4)",
        ),
        ({"dynamic": True, "minExecutors": -1}, "minExecutors", "greater than or equal to 0"),
        ({"dynamic": True, "initialExecutors": "two"}, "initialExecutors", "integer"),
        ({"deployMode": "server"}, "deployMode", "client"),
        ({"dynamic": "sometimes"}, "dynamic", "boolean"),
    ],
    ids=[
        "min-not-dynamic",
        "initial-not-dynamic",
        "min-above-max",
        "initial-above-max",
        "initial-below-min",
        "negative-min",
        "initial-not-a-number",
        "unknown-deploy-mode",
        "dynamic-not-a-boolean",
    ],
)
def test_bad_standard_fields_name_the_field(
    instance: dict[str, Any], path: str, message: str
) -> None:
    assert_error(standard(**instance), f"{INSTANCE}.{path}", message)


def test_the_quota_counts_a_dynamic_jobs_most_executors() -> None:
    job = parse(standard(dynamic=True, executors=3, minExecutors=0, executor="medium"))
    instance = job.spec.instance
    demand = application_demand(
        driver=instance.driver,
        executor=instance.executor,
        executors=instance.executors,
        node_types={"small": NodeSize(1, 1024), "medium": NodeSize(2, 2048)},
    )
    assert (demand.cores, demand.memory_mb) == (1 + 3 * 2, 1024 + 3 * 2048)


@pytest.mark.parametrize(
    ("instance", "asked"),
    [
        ({"executors": 3}, 3),
        ({"executors": 3, "dynamic": True}, 0),
        ({"executors": 3, "dynamic": True, "minExecutors": 1}, 1),
    ],
)
def test_a_dynamic_job_waits_only_for_its_fewest_executors(
    instance: dict[str, Any], asked: int
) -> None:
    spec = {"spec": {"instance": {"deployment": "standard", **instance}}}
    assert ApplicationTerms.of(spec, version=1).executors == asked


@pytest.mark.parametrize(
    "key",
    [
        "spark.dynamicAllocation.executorIdleTimeout",
        "spark.dynamicAllocation.schedulerBacklogTimeout",
        "spark.dynamicAllocation.shuffleTracking.timeout",
    ],
)
def test_a_job_may_tune_how_fast_executors_come_and_go(key: str) -> None:
    assert refused_setting_reason(key) is None
    manifest = changed(standard(dynamic=True), ("spec.configuration.sparkConf", {key: "5s"}))
    assert parse(manifest).spec.configuration.spark_conf == {key: "5s"}


@pytest.mark.parametrize(
    "key",
    [
        "spark.dynamicAllocation.enabled",
        "spark.dynamicAllocation.maxExecutors",
        "spark.dynamicAllocation.minExecutors",
        "spark.dynamicAllocation.shuffleTracking.enabled",
        "spark.dynamicAllocation.EXECUTORIDLETIMEOUT",
    ],
)
def test_a_job_cannot_change_how_many_executors_it_may_take(key: str) -> None:
    manifest = changed(standard(dynamic=True), ("spec.configuration.sparkConf", {key: "9"}))
    assert_error(manifest, f'spec.configuration.sparkConf["{key}"]', "set spec.instance.dynamic")


@pytest.mark.parametrize("key", ["spark.driver.host", "spark.driver.bindAddress"])
def test_a_job_cannot_choose_its_drivers_address(key: str) -> None:
    manifest = changed(standard(), ("spec.configuration.sparkConf", {key: "0.0.0.0"}))
    assert_error(manifest, f'spec.configuration.sparkConf["{key}"]', "STREAMJOBS_DRIVER_HOST")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.1.1", True),
        ("localhost", True),
        ("LocalHost.", True),
        ("spark.localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("10.20.0.2", False),
        ("0.0.0.0", False),
        ("spark-master", False),
        ("localhost.example.com", False),
    ],
)
def test_loopback_hosts_are_known_by_how_they_are_written(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_master_urls_give_their_masters_and_the_first_remote_one() -> None:
    addresses = master_addresses("spark://127.0.0.1:7077,10.20.0.3:7078,[fd00::5]")
    assert [(a.host, a.port) for a in addresses] == [
        ("127.0.0.1", 7077),
        ("10.20.0.3", 7078),
        ("fd00::5", 7077),
    ]
    remote = remote_master("spark://127.0.0.1:7077,10.20.0.3:7078")
    assert remote is not None
    assert (remote.host, remote.port) == ("10.20.0.3", 7078)
    assert remote_master("spark://localhost:7077") is None
    assert remote_master("local[2]") is None
    assert remote_master(None) is None


def problems(**settings: Any) -> list[str]:
    given = {
        "master_url": REMOTE_MASTER,
        "public_url": "http://10.20.0.1:8040",
        "public_url_set": True,
        "driver_host": None,
        "driver_bind_address": None,
        **settings,
    }
    return cluster_address_problems(**given)


def test_a_remote_master_with_reachable_addresses_has_no_problem() -> None:
    assert problems() == []
    assert problems(driver_host="10.20.0.1", driver_bind_address="0.0.0.0") == []
    assert problems(public_url="https://streamjobs.example.com") == []


@pytest.mark.parametrize("local_master", ["spark://127.0.0.1:7077", "spark://localhost:7077", None])
def test_a_cluster_on_this_machine_may_use_loopback_everywhere(local_master: str | None) -> None:
    assert (
        problems(
            master_url=local_master,
            public_url="http://127.0.0.1:8040",
            public_url_set=False,
            driver_host="127.0.0.1",
            driver_bind_address="127.0.0.1",
        )
        == []
    )


def test_an_unset_public_url_on_loopback_names_the_setting_to_set() -> None:
    [problem] = problems(public_url="http://127.0.0.1:8040", public_url_set=False)
    assert "the standalone master spark://10.20.0.2:7077 is on another host" in problem
    assert "STREAMJOBS_PUBLIC_URL is unset, so drivers would report to http://127.0.0.1:8040" in (
        problem
    )
    assert "Set STREAMJOBS_PUBLIC_URL to a URL of this server that the cluster's hosts" in problem
    assert "STREAMJOBS_HOST" in problem


@pytest.mark.parametrize(
    "public_url", ["http://localhost:8040", "http://[::1]:8040", "http://0.0.0.0:8040"]
)
def test_a_public_url_no_other_host_reaches_is_a_problem(public_url: str) -> None:
    [problem] = problems(public_url=public_url)
    assert f"STREAMJOBS_PUBLIC_URL={public_url} is an address no other host reaches" in problem


@pytest.mark.parametrize("driver_host", ["127.0.0.1", "localhost", "0.0.0.0"])
def test_a_driver_host_executors_cannot_reach_is_a_problem(driver_host: str) -> None:
    [problem] = problems(driver_host=driver_host)
    assert f"STREAMJOBS_DRIVER_HOST={driver_host} is an address executors on other hosts" in (
        problem
    )


def test_a_loopback_bind_address_is_a_problem_but_every_address_is_not() -> None:
    [problem] = problems(driver_bind_address="127.0.0.1")
    assert "STREAMJOBS_DRIVER_BIND_ADDRESS=127.0.0.1 makes drivers listen on a loopback" in problem
    assert problems(driver_bind_address="0.0.0.0") == []


def test_every_problem_is_listed() -> None:
    found = problems(
        public_url="http://127.0.0.1:8040",
        driver_host="127.0.0.1",
        driver_bind_address="::1",
    )
    assert len(found) == 3


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_run_refuses_standard_jobs_while_the_cluster_settings_have_problems(
    deploy_mode: str,
) -> None:
    [problem] = problems(public_url="http://127.0.0.1:8040", public_url_set=False)
    [error] = cluster_settings_errors(parse(standard(deployMode=deploy_mode)), [problem])
    assert error.path == "spec.instance.deployment"
    assert "cannot run deployment standard as it is configured" in error.message
    assert "STREAMJOBS_PUBLIC_URL" in error.message
    assert cluster_settings_errors(parse(pipeline_manifest()), [problem]) == []
    assert cluster_settings_errors(parse(standard()), []) == []
