"""Two `streamjobs server` processes on one PostgreSQL, on two hosts of the namespace cluster, and a
cluster-mode job (its driver on a worker): exactly one server leads (``/healthz``). The leader
is SIGKILLed: the other leads within the lease plus 5 seconds, follows the same driver by its
submission id (no second driver: the master has one), and when the driver is then killed at
the master it restarts the job by its policy. The first server comes back as a standby; the
leader is paused (SIGSTOP) past its lease, the standby takes over meanwhile, and once the paused
one is continued its writes under its old lease token are refused and its console says so.

Reports: a driver reports to the public URL of the server that launched it; here each server's
own address, with no proxy in front of both. So once that server is gone the driver's reports
go nowhere (the driver buffers them, and its job goes on), and the new leader's only sign of
the driver is the master's word on it. The servers' heartbeat timeout is longer than the test,
so that this silence is not taken as a hung driver; the job running on is seen in its
checkpoint, where batches keep being committed. (In production ``STREAMJOBS_PUBLIC_URL`` names
an address in front of all the servers, and reports reach whichever answers.)

What the paused leader does when continued depends on where it was stopped: between ticks (the
usual case) its next lease renewal, a write under its old token, is refused; in the middle of a
tick the tick's next fenced write is. Both are logged as "refused because another server leads
now", which is what is checked, with the server saying ``standby`` after it and the job's
attempts and drivers untouched."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from streamjobs.devtools.netns import Host
from tests.e2e.windowed_counts import application, described, events, in_state, put, run
from tests.multihost.cluster import NetnsCluster
from tests.multihost.cluster_jobs import (
    active_driver_ids,
    add_tiny_node_type,
    checkpoint_of,
    completed_driver_state,
    last_commit,
    rate_job,
    running_attempt,
    wait_until,
)
from tests.multihost.servers import NamespaceServer, ServerStarter

pytestmark = [
    pytest.mark.multihost,
    pytest.mark.spark,
    pytest.mark.postgres,
    pytest.mark.timeout(900),
]

JOB = "ticks-led"
LEASE_SECONDS = 5
TAKEOVER_SECONDS = LEASE_SECONDS + 5
"""The issue's bound on a takeover, from the leader's loss to another server leading."""
HEARTBEAT_TIMEOUT_SECONDS = 3600
"""Longer than the test: see the module docstring."""
REFUSED = "refused because another server leads now"
RESTART = {"type": "OnFailure", "onFailureRetries": 3, "onFailureRetryInterval": 1}


@pytest.fixture
def second_host(netns_cluster: NetnsCluster, server_in: ServerStarter) -> Iterator[Host]:
    """A host for the second server, removed (with what runs there) after the test."""
    host = netns_cluster.network.add_host("control2")
    try:
        yield host
    finally:
        netns_cluster.network.tear_down(host)


def health(server: NamespaceServer) -> dict[str, Any]:
    """The server's ``/healthz``; empty while it does not answer (killed, paused)."""
    try:
        answer = httpx.get(f"{server.url}/healthz", timeout=2)
        found: dict[str, Any] = answer.json()
    except (httpx.HTTPError, ValueError):
        return {}
    return found


def role(server: NamespaceServer) -> str | None:
    return health(server).get("role")


def leader_and_standby(
    first: NamespaceServer, second: NamespaceServer
) -> tuple[NamespaceServer, NamespaceServer] | None:
    """(leader, standby) once exactly one of the two leads and both name it the leader."""
    said = {server.url: health(server) for server in (first, second)}
    roles = sorted(str(said[server.url].get("role")) for server in (first, second))
    if roles != ["leader", "standby"]:
        return None
    leader, standby = (first, second) if said[first.url]["role"] == "leader" else (second, first)
    named = {(said[server.url].get("leader") or {}).get("url") for server in (first, second)}
    return (leader, standby) if named == {leader.url} else None


def console_since(server: NamespaceServer, offset: int) -> str:
    with server.console.open("rb") as console:
        console.seek(offset)
        return console.read().decode("utf-8", errors="replace")


def test_the_standby_takes_over_the_running_job_and_a_paused_leader_cannot_write(
    netns_cluster: NetnsCluster,
    server_in: ServerStarter,
    second_host: Host,
    multihost_postgres_url: str,
    tmp_path: Path,
) -> None:
    settings = {
        "STREAMJOBS_LEASE_SECONDS": str(LEASE_SECONDS),
        "STREAMJOBS_HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT_SECONDS),
    }
    first = server_in(
        netns_cluster.control, tmp_path, env_overrides=settings, database_url=multihost_postgres_url
    )
    second = server_in(
        second_host, tmp_path, env_overrides=settings, database_url=multihost_postgres_url
    )
    old_leader, new_leader = wait_until(
        "exactly one leader, named by both servers",
        lambda: leader_and_standby(first, second),
        lambda: f"{health(first)} {health(second)}",
        seconds=60,
    )
    (root,) = json.loads(old_leader.env["STREAMJOBS_DEFAULT_DATA_ROOTS"])
    data = Path(urlsplit(root).path)
    checkpoint = checkpoint_of(data, JOB)
    job = rate_job(JOB, data, deploy_mode="cluster", executors=1, restart=RESTART)

    with old_leader.client() as api:
        add_tiny_node_type(api)
        put(api, f"/api/v1/jobs/{JOB}", job)
        app_id = run(api, JOB)
        app = wait_until(
            "the first attempt to run", running_attempt(api, app_id, 1), described(api, app_id)
        )
    wait_until("a committed batch", lambda: last_commit(checkpoint) >= 0)
    submitted = app["attempts"][0]["submissionId"]
    assert active_driver_ids(netns_cluster) == [submitted]

    # The leader is lost: the standby leads within the bound and follows the same driver.
    killed_at = time.monotonic()
    old_leader.kill()
    wait_until(
        "the standby to lead",
        lambda: role(new_leader) == "leader",
        lambda: new_leader.console_tail(),
        seconds=killed_at + TAKEOVER_SECONDS - time.monotonic(),
    )
    assert health(new_leader)["leader"]["url"] == new_leader.url
    with new_leader.client() as api:
        describe = described(api, app_id)
        batch = last_commit(checkpoint)
        wait_until(
            "batches committed after the takeover", lambda: last_commit(checkpoint) > batch + 2
        )
        app = application(api, app_id)
        assert app["state"] == "RUNNING", describe()
        assert [attempt["submissionId"] for attempt in app["attempts"]] == [submitted]
        assert active_driver_ids(netns_cluster) == [submitted]

        # The job fails (its driver killed at the master): the new leader restarts it.
        killed = httpx.post(f"{netns_cluster.rest_url}/v1/submissions/kill/{submitted}", timeout=10)
        assert killed.json().get("success") is True, killed.text
        app = wait_until("a second attempt to run", running_attempt(api, app_id, 2), describe)
        failed, restarted = app["attempts"]
        assert failed["outcome"] == "failed", app["attempts"]
        assert restarted["submissionId"] not in (None, submitted)
        assert "restarting" in [kind for kind, _ in events(api, app_id)]
        assert active_driver_ids(netns_cluster) == [restarted["submissionId"]]
        batch = last_commit(checkpoint)
        wait_until("the restarted driver to commit", lambda: last_commit(checkpoint) > batch)

    # The first leader comes back as a standby; the new leader is paused past its lease.
    old_leader.start()
    wait_until("the restarted server to stand by", lambda: role(old_leader) == "standby")
    paused_at = time.monotonic()
    new_leader.pause()
    wait_until(
        "the restarted server to lead while the other is paused",
        lambda: role(old_leader) == "leader",
        lambda: old_leader.console_tail(),
        seconds=paused_at + TAKEOVER_SECONDS - time.monotonic(),
    )
    seen = new_leader.console.stat().st_size
    new_leader.resume()
    wait_until(
        "the continued server to log that its write was refused",
        lambda: REFUSED in console_since(new_leader, seen),
        lambda: new_leader.console_tail(),
    )
    wait_until("the continued server to stand by", lambda: role(new_leader) == "standby")
    assert health(new_leader)["leader"]["url"] == old_leader.url

    with old_leader.client() as api:
        describe = described(api, app_id)
        batch = last_commit(checkpoint)
        wait_until(
            "batches committed after the second takeover",
            lambda: last_commit(checkpoint) > batch + 2,
        )
        app = application(api, app_id)
        assert app["state"] == "RUNNING", describe()
        assert [attempt["submissionId"] for attempt in app["attempts"]] == [
            failed["submissionId"],
            restarted["submissionId"],
        ]
        assert active_driver_ids(netns_cluster) == [restarted["submissionId"]]

        # The server leading again ends the job.
        assert api.post(f"/api/v1/applications/{app_id}/abort").status_code == 202
        wait_until("ABORTED", in_state(api, app_id, "ABORTED"), describe)
    assert active_driver_ids(netns_cluster) == []
    assert completed_driver_state(netns_cluster, restarted["submissionId"]) in (
        "KILLED",
        "FINISHED",
    )
