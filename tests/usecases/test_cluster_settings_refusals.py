"""A standalone master on another host with settings its hosts could not reach the server or the
drivers at (a loopback public URL or driver host): ``streamjobs server`` refuses to start, before
it touches the store, and Run refuses a standard job (client and cluster mode) with a 409 at
``spec.instance.deployment``; each names the setting to set."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.composition import build_server
from streamjobs.domain.cluster_addresses import ClusterSettingsUnusable
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.fake import FakeLauncher
from streamjobs.launch.ports import free_loopback_port
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.api.problems import error_paths
from tests.factories import changed, pipeline_manifest
from tests.live_server import live_server

REMOTE_MASTER = "spark://10.20.0.2:7077"
STREAMJOBS = [sys.executable, "-m", "streamjobs.cli"]


def server_start(home: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """``streamjobs server`` with only these ``STREAMJOBS_*`` settings, run to its end."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("STREAMJOBS_")}
    environment.update(
        STREAMJOBS_HOME=str(home),
        STREAMJOBS_PORT=str(free_loopback_port()),
        STREAMJOBS_SPARK_MASTER=REMOTE_MASTER,
        **settings,
    )
    return subprocess.run(
        [*STREAMJOBS, "server"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({}, "STREAMJOBS_PUBLIC_URL is unset, so drivers would report to http://127.0.0.1:"),
        (
            {"STREAMJOBS_PUBLIC_URL": "http://localhost:8040"},
            "STREAMJOBS_PUBLIC_URL=http://localhost:8040 is an address no other host reaches",
        ),
        (
            {
                "STREAMJOBS_PUBLIC_URL": "http://10.20.0.1:8040",
                "STREAMJOBS_DRIVER_HOST": "127.0.0.1",
            },
            "STREAMJOBS_DRIVER_HOST=127.0.0.1 is an address executors on other hosts cannot",
        ),
    ],
    ids=["public-url-unset", "public-url-loopback", "driver-host-loopback"],
)
def test_the_server_refuses_to_start_naming_the_setting(
    tmp_path: Path, settings: dict[str, str], named: str
) -> None:
    home = tmp_path / "home"
    started = server_start(home, **settings)
    output = started.stdout + started.stderr
    assert started.returncode == 1, output
    assert "cannot use the standalone cluster" in output
    assert named in " ".join(output.split())
    assert not (home / "streamjobs.db").exists()


def test_open_services_refuses_with_a_typed_error(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", spark_master=REMOTE_MASTER)
    with pytest.raises(ClusterSettingsUnusable, match="STREAMJOBS_PUBLIC_URL"):
        open_services(settings)
    assert not (tmp_path / "home" / "streamjobs.db").exists()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    """A server whose settings name a remote master and no public URL, over fake launchers
    (which do not refuse to start): only Run stands in the way."""
    settings = Settings(home=tmp_path / "home", spark_master=REMOTE_MASTER)
    launchers = {Deployment.SINGLE_NODE: FakeLauncher(), Deployment.STANDARD: FakeLauncher()}
    server = build_server(settings, launchers=launchers, supervise=False)
    token = server.services.identity.bootstrap_admin().token
    try:
        with live_server(server) as url:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
                yield client
    finally:
        server.close()


def put_job(api: httpx.Client, name: str, instance: dict[str, Any]) -> None:
    manifest = changed(pipeline_manifest(name), ("spec.instance", instance))
    answer = api.put(f"/api/v1/jobs/{name}", json=manifest)
    assert answer.status_code == 201, answer.text


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_run_refuses_a_standard_job_naming_the_setting(api: httpx.Client, deploy_mode: str) -> None:
    name = f"standard-{deploy_mode}"
    put_job(api, name, {"deployment": "standard", "deployMode": deploy_mode})
    answer = api.post(f"/api/v1/jobs/{name}/run")
    assert error_paths(answer, 409) == ["spec.instance.deployment"]
    detail = answer.json()["detail"]
    assert "cannot run deployment standard as it is configured" in detail
    assert "Set STREAMJOBS_PUBLIC_URL to a URL of this server that the cluster's hosts" in detail
    assert api.get(f"/api/v1/jobs/{name}/applications").json()["items"] == []


def test_run_still_starts_a_single_node_job(api: httpx.Client) -> None:
    put_job(api, "single", {"deployment": "singleNode"})
    assert api.post("/api/v1/jobs/single/run").status_code == 201
