"""Where client-mode drivers are reached and listen: 127.0.0.1 with a cluster on this machine,
the settings' addresses or this machine's address on the route to a remote master, never a
loopback address for a remote master; and a real driver given a non-loopback address answers
there, its executors connecting back to it."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from streamjobs.domain.cluster_addresses import ClusterSettingsUnusable
from streamjobs.launch.base import NodeSize
from streamjobs.launch.command import spark_settings, spark_submit_command
from streamjobs.launch.driver_addresses import (
    LOOPBACK_DRIVER,
    DriverAddresses,
    driver_addresses,
    kernel_route_source,
)
from streamjobs.launch.standalone import StandaloneLauncher
from tests.conftest import skip_or_fail
from tests.factories import changed, python_manifest
from tests.launch.conftest import TOOLCHAIN as INSTALLED_TOOLCHAIN
from tests.launch.conftest import (
    Drivers,
    StandaloneCluster,
    attempt_for,
    launch_sandbox,
    python_app_manifest,
    wait_until,
)
from tests.launch.test_command import ATTEMPT_DIR, TOOLCHAIN, conf_of

REMOTE = "spark://10.20.0.2:7077"


class RecordedProbe:
    """A route probe that answers ``address`` (or raises ``error``) and records its questions."""

    def __init__(self, address: str = "10.20.0.1", error: OSError | None = None) -> None:
        self.address = address
        self.error = error
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> str:
        self.asked.append((host, port))
        if self.error is not None:
            raise self.error
        return self.address


def test_a_cluster_on_this_machine_keeps_its_drivers_on_loopback() -> None:
    probe = RecordedProbe()
    for master in ("spark://127.0.0.1:7077", "spark://localhost:7077", None):
        assert driver_addresses(master, route_probe=probe) == LOOPBACK_DRIVER
    assert probe.asked == []


def test_a_remote_master_gets_the_address_on_the_route_to_it() -> None:
    probe = RecordedProbe("10.20.0.1")
    addresses = driver_addresses("spark://127.0.0.1:7077,10.20.0.2:7078", route_probe=probe)
    assert addresses == DriverAddresses(host="10.20.0.1", bind_address="10.20.0.1")
    assert probe.asked == [("10.20.0.2", 7078)]


def test_the_settings_win_over_the_route() -> None:
    probe = RecordedProbe()
    addresses = driver_addresses(
        REMOTE, driver_host="spark-client.example", bind_address="0.0.0.0", route_probe=probe
    )
    assert addresses == DriverAddresses(host="spark-client.example", bind_address="0.0.0.0")
    assert driver_addresses(REMOTE, bind_address="0.0.0.0", route_probe=probe) == (
        DriverAddresses(host="10.20.0.1", bind_address="0.0.0.0")
    )
    assert probe.asked == [("10.20.0.2", 7077)]


def test_no_route_to_the_master_names_the_setting_to_set() -> None:
    probe = RecordedProbe(error=OSError(101, "Network is unreachable"))
    with pytest.raises(ClusterSettingsUnusable) as refused:
        driver_addresses(REMOTE, route_probe=probe)
    assert "the route to the standalone master's host 10.20.0.2" in refused.value.detail
    assert "Network is unreachable" in refused.value.detail
    assert "set STREAMJOBS_DRIVER_HOST to this machine's address" in refused.value.detail


def test_a_route_through_loopback_is_never_taken_silently() -> None:
    with pytest.raises(ClusterSettingsUnusable, match="STREAMJOBS_DRIVER_HOST") as refused:
        driver_addresses("spark://spark-master:7077", route_probe=RecordedProbe("127.0.0.1"))
    assert "reached from this machine's loopback address 127.0.0.1" in refused.value.detail


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"driver_host": "127.0.0.1"}, "STREAMJOBS_DRIVER_HOST=127.0.0.1"),
        ({"driver_host": "0.0.0.0"}, "STREAMJOBS_DRIVER_HOST=0.0.0.0"),
        ({"bind_address": "localhost"}, "STREAMJOBS_DRIVER_BIND_ADDRESS=localhost"),
    ],
)
def test_loopback_settings_for_a_remote_master_are_refused(
    settings: dict[str, str], named: str
) -> None:
    with pytest.raises(ClusterSettingsUnusable, match=named):
        driver_addresses(REMOTE, route_probe=RecordedProbe(), **settings)


def test_the_kernel_route_to_this_machine_leaves_from_the_address_asked() -> None:
    assert kernel_route_source("127.0.0.1", 7077) == "127.0.0.1"
    own = this_machines_address()
    assert kernel_route_source(own, 7077) == own


def test_a_master_name_that_does_not_resolve_is_refused_at_once() -> None:
    with pytest.raises(socket.gaierror):
        kernel_route_source("no-such-master.invalid", 7077)
    with pytest.raises(ClusterSettingsUnusable) as refused:
        driver_addresses("spark://no-such-master.invalid:7077")
    assert "the standalone master's host no-such-master.invalid" in refused.value.detail
    assert "set STREAMJOBS_DRIVER_HOST" in refused.value.detail


def standard(manifest: dict[str, Any], **instance: Any) -> dict[str, Any]:
    return changed(manifest, ("spec.instance", {"deployment": "standard", **instance}))


CLIENT = DriverAddresses(host="10.20.0.1", bind_address="0.0.0.0")


def command_of(manifest: dict[str, Any], master: str) -> tuple[dict[str, str], dict[str, str]]:
    attempt = attempt_for(manifest, ATTEMPT_DIR, executor=NodeSize(cores=1, memory_mb=1024))
    command = spark_submit_command(
        attempt,
        master=master,
        ui_port=4555,
        toolchain=TOOLCHAIN,
        base_environment={"PATH": "/usr/bin"},
        driver_addresses=CLIENT,
    )
    return conf_of(command.argv), command.environment


def test_a_client_mode_driver_advertises_and_listens_where_the_server_says() -> None:
    conf, environment = command_of(standard(python_manifest("py")), REMOTE)
    assert conf["spark.driver.host"] == "10.20.0.1"
    assert conf["spark.driver.bindAddress"] == "0.0.0.0"
    assert environment["SPARK_LOCAL_IP"] == "0.0.0.0"  # where its UI and REST API answer


def test_a_local_driver_stays_on_loopback_under_a_cluster_launcher() -> None:
    conf, environment = command_of(python_manifest("py"), "local[1]")
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert environment["SPARK_LOCAL_IP"] == "127.0.0.1"


def test_a_cluster_mode_driver_leaves_its_address_to_its_worker() -> None:
    conf, _ = command_of(standard(python_manifest("py"), deployMode="cluster"), REMOTE)
    assert "spark.driver.host" not in conf
    assert "spark.driver.bindAddress" not in conf


def test_a_local_run_of_a_cluster_mode_job_stays_on_loopback() -> None:
    """As the short tools (``tool_runs``) run a job's code: ``local[N]``, whatever its mode."""
    manifest = standard(python_manifest("py"), deployMode="cluster")
    attempt = attempt_for(manifest, ATTEMPT_DIR, executor=NodeSize(cores=1, memory_mb=1024))
    conf = dict(
        spark_settings(
            attempt, master="local[1]", ui_port=0, toolchain=TOOLCHAIN, driver_addresses=CLIENT
        )
    )
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"


def this_machines_address() -> str:
    """An IPv4 address of this machine other than loopback."""
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not address.address.startswith("127."):
                return str(address.address)
    skip_or_fail("this machine has no IPv4 address but loopback")
    raise AssertionError("unreachable")  # skip_or_fail raises


@pytest.mark.spark
def test_a_driver_on_a_network_address_answers_there_and_its_executor_joins_it(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    address = this_machines_address()
    launcher = StandaloneLauncher(
        toolchain=INSTALLED_TOOLCHAIN,
        master_url=standalone_cluster.master_url,
        worker_dirs=standalone_cluster.worker_dirs,
        sandbox=launch_sandbox(),
        driver_addresses=DriverAddresses(host=address, bind_address=address),
    )
    control = tmp_path / "control"
    control.mkdir()
    manifest = python_app_manifest(
        "on-network",
        "load_on_request.py",
        str(control),
        instance={"deployment": "standard", "executor": "tiny", "executors": 1},
    )
    attempt = attempt_for(manifest, tmp_path / "attempt", executor=NodeSize(cores=1, memory_mb=512))
    handle = drivers.submit(launcher, attempt)
    assert handle.driver_host == address

    api = f"http://{address}:{handle.ui_port}/api/v1"
    wait_until(lambda: active_executors(api), what="an executor to join the driver at its address")
    listening = {
        connection.laddr.ip.removeprefix("::ffff:")
        for connection in psutil.net_connections("tcp")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == handle.ui_port
    }
    assert listening == {address}
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{handle.ui_port}/api/v1/applications", timeout=5)

    (control / "stop").touch()
    assert drivers.wait_exited(launcher, handle) == 0


def active_executors(api: str) -> list[dict[str, Any]] | None:
    """The driver's active executors but itself, once it has some."""
    try:
        [application] = httpx.get(f"{api}/applications", timeout=2).json()
        summaries = httpx.get(f"{api}/applications/{application['id']}/executors", timeout=2)
    except (httpx.HTTPError, ValueError):
        return None
    active = [e for e in summaries.json() if e["id"] != "driver" and e.get("isActive")]
    return active or None
