"""`deployment: standard` jobs on a Spark standalone cluster on other hosts, for real: a
`streamjobs server` on the ``control`` host, the master and two workers each on a host of their
own, a rate -> Parquet pipeline with two one-core executors, its driver on the server's host
(client mode) or on a worker (cluster mode). Each reaches RUNNING with an executor on each
worker, its executors' logs are listed and read through the API (from the workers' web UIs),
Stop ends it STOPPED with every started batch committed, and a second run, aborted, ends ABORTED
with no driver left anywhere.

One server serves both modes (module-scoped); the modes run one after the other, since the
cluster's four cores do not hold both jobs at once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.windowed_counts import application, described, in_state, put, run
from tests.multihost.cluster import NetnsCluster
from tests.multihost.cluster_jobs import (
    active_application_ids,
    active_driver_ids,
    active_executors,
    add_tiny_node_type,
    batches,
    checkpoint_of,
    committed_files,
    completed_driver_state,
    driver_processes,
    driver_worker_host,
    executors_at_workers,
    last_commit,
    latest_attempt,
    output_of,
    rate_job,
    wait_until,
)
from tests.multihost.servers import NamespaceServer, ServerStarter

pytestmark = [pytest.mark.multihost, pytest.mark.spark, pytest.mark.timeout(900)]

EXECUTOR_COMMAND = "Spark Executor Command:"
"""What a worker writes at the top of every executor's stderr."""


@pytest.fixture(scope="module")
def server(
    netns_cluster: NetnsCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NamespaceServer]:
    """One server on the ``control`` host for the module's tests, with the ``tiny`` node type."""
    starter = ServerStarter(netns_cluster)
    try:
        started = starter(netns_cluster.control, tmp_path_factory.mktemp("standalone-jobs"))
        with started.client() as api:
            add_tiny_node_type(api)
        yield started
    finally:
        starter.kill_all()


def data_root(server: NamespaceServer) -> Path:
    (root,) = json.loads(server.env["STREAMJOBS_DEFAULT_DATA_ROOTS"])
    return Path(urlsplit(root).path)


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_a_standard_job_runs_on_both_workers_shows_their_logs_stops_and_aborts(
    server: NamespaceServer, netns_cluster: NetnsCluster, deploy_mode: str
) -> None:
    name = f"ticks-{deploy_mode}"
    data = data_root(server)
    checkpoint = checkpoint_of(data, name)
    job = rate_job(name, data, deploy_mode=deploy_mode, executors=2, restart={"type": "Never"})
    workers = {host.address for host in netns_cluster.workers}
    with server.client() as api:
        put(api, f"/api/v1/jobs/{name}", job)
        first = run(api, name)
        describe = described(api, first)

        wait_until("RUNNING", in_state(api, first, "RUNNING"), describe)
        wait_until("a committed batch", lambda: last_commit(checkpoint) >= 0, describe)
        app = wait_until(
            "an active executor on each worker in the application's figures",
            lambda: (
                (found := application(api, first))
                and set(active_executors(found).values()) == workers
                and found
            ),
            describe,
        )
        executors = active_executors(app)
        assert len(executors) == 2, executors
        assert executors_at_workers(netns_cluster, app["sparkApplicationId"]) == executors

        attempt = latest_attempt(app)
        assert attempt["deployMode"] == deploy_mode
        if deploy_mode == "cluster":
            submission_id = attempt["submissionId"]
            assert submission_id in active_driver_ids(netns_cluster)
            assert attempt["driverHost"] == driver_worker_host(netns_cluster, submission_id)
            assert attempt["driverHost"] in workers
        else:
            assert attempt["submissionId"] is None
            assert attempt["driverHost"] == netns_cluster.control.address
            assert len(driver_processes(server.home)) == 1

        assert_executor_logs_readable(api, first, executors)

        assert api.post(f"/api/v1/jobs/{name}/stop").status_code == 202
        wait_until("STOPPED", in_state(api, first, "STOPPED"), describe)
        stopped = application(api, first)
        assert stopped["exitCode"] == 0, describe()
        started, committed = batches(checkpoint, "offsets"), batches(checkpoint, "commits")
        assert started == committed, (started, committed)
        assert committed_files(output_of(data, name))
        if deploy_mode == "cluster":
            assert completed_driver_state(netns_cluster, submission_id) == "FINISHED"

        second = run(api, name)
        describe = described(api, second)
        wait_until("the second application to run", in_state(api, second, "RUNNING"), describe)
        wait_until(
            "the second application to commit a batch",
            lambda: last_commit(checkpoint) > max(committed),
            describe,
        )
        again = application(api, second)
        assert api.post(f"/api/v1/applications/{second}/abort").status_code == 202
        wait_until("ABORTED", in_state(api, second, "ABORTED"), describe)
        assert_no_driver_left(netns_cluster, server, again)


def assert_executor_logs_readable(
    api: httpx.Client, application_id: str, executors: dict[str, str]
) -> None:
    """Every executor's stderr and stdout are listed with their sizes, and its stderr is read
    (by range, by tail and whole) from its worker."""
    listed = api.get(f"/api/v1/applications/{application_id}/logs", params={"tail": 5})
    assert listed.status_code == 200, listed.text
    instances = listed.json()["instances"]
    for executor_id in executors:
        stderr, stdout = f"executor-{executor_id}", f"executor-{executor_id}-stdout"
        assert {stderr, stdout} <= instances.keys(), instances
        assert isinstance(instances[stderr], int), instances
        assert instances[stderr] > 0, instances
        head = api.get(
            f"/api/v1/applications/{application_id}/logs",
            params={"instance": stderr, "start": 0, "end": 4096},
        )
        assert head.status_code == 200, head.text
        assert head.json()["text"].startswith(EXECUTOR_COMMAND), head.json()["text"][:200]
        tail = api.get(
            f"/api/v1/applications/{application_id}/logs",
            params={"instance": stderr, "tail": 3},
        )
        assert tail.status_code == 200, tail.text
        assert 0 < len(tail.json()["text"].splitlines()) <= 3
        whole = api.get(
            f"/api/v1/applications/{application_id}/logs/download", params={"instance": stderr}
        )
        assert whole.status_code == 200
        assert whole.text.startswith(EXECUTOR_COMMAND)
    driver = api.get(
        f"/api/v1/applications/{application_id}/logs", params={"instance": "driver", "tail": 20}
    )
    assert driver.status_code == 200, driver.text
    assert driver.json()["size"] > 0


def assert_no_driver_left(
    cluster: NetnsCluster, server: NamespaceServer, aborted: dict[str, Any]
) -> None:
    """Neither a driver process on the server's host, nor a driver or application at the master
    (a cluster-mode driver is KILLED or, having stopped in time, FINISHED)."""
    attempt = latest_attempt(aborted)
    spark_application = str(aborted["sparkApplicationId"])
    wait_until(
        "the master to see the aborted application end",
        lambda: spark_application not in active_application_ids(cluster),
        lambda: str(cluster.spark.status().get("activeapps")),
    )
    assert driver_processes(server.home) == []
    submission_id = attempt["submissionId"]
    if submission_id is not None:
        assert submission_id not in active_driver_ids(cluster)
        assert completed_driver_state(cluster, submission_id) in ("KILLED", "FINISHED")
