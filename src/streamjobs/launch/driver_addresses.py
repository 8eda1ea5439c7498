"""The addresses a client-mode driver advertises to its executors and listens on.

A standard job's driver in client mode runs on the server's machine, and its executors, on the
cluster's workers, connect back to it at ``spark.driver.host``; it listens on
``spark.driver.bindAddress`` (its RPC and block manager) and on ``SPARK_LOCAL_IP`` (its UI and
REST API, which the supervisor reads). With the master on this machine both are 127.0.0.1, as
for every local driver. With a master on another host they come from the server's settings
(``STREAMJOBS_DRIVER_HOST``, ``STREAMJOBS_DRIVER_BIND_ADDRESS``), else from the address this
machine sends from on its route to the master: the kernel's choice of source address, found by
``connect()``-ing a UDP socket (no packet is sent). A remote master never silently gets a
loopback driver: when no other address can be found the server refuses to start and says which
setting to set (``ClusterSettingsUnusable``).

Decided once, when the server builds its launchers; a job cannot change them
(``domain.spark_policy`` refuses both settings in ``sparkConf``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Protocol

from streamjobs.domain.cluster_addresses import (
    DRIVER_HOST_SETTING,
    LOOPBACK,
    ClusterSettingsUnusable,
    driver_address_problems,
    is_loopback,
    refuse_cluster_problems,
    remote_master,
)


@dataclass(frozen=True)
class DriverAddresses:
    """Where a client-mode driver is reached (``host``: ``spark.driver.host``, the handle's
    ``driver_host``) and where it listens (``bind_address``: ``spark.driver.bindAddress`` and
    ``SPARK_LOCAL_IP``, 0.0.0.0 for every address)."""

    host: str
    bind_address: str


LOOPBACK_DRIVER = DriverAddresses(host=LOOPBACK, bind_address=LOOPBACK)
"""Every local driver's addresses, and a client-mode driver's when the cluster is on this
machine."""


class RouteProbe(Protocol):
    """Finds this machine's address on its route to another host."""

    def __call__(self, host: str, port: int) -> str:
        """The address this machine would send from to ``host``:``port`` (a name or an
        address); ``OSError`` when the name does not resolve or there is no route."""
        ...


def kernel_route_source(host: str, port: int) -> str:
    """The source address the kernel picks for ``host``:``port``: a UDP socket ``connect()``
    chooses its route and local address, and sends nothing."""
    family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    with socket.socket(family, kind, protocol) as probe:
        probe.connect(address)
        return str(probe.getsockname()[0])


def driver_addresses(
    master_url: str | None,
    *,
    driver_host: str | None = None,
    bind_address: str | None = None,
    route_probe: RouteProbe = kernel_route_source,
) -> DriverAddresses:
    """The addresses of client-mode drivers of ``master_url``'s jobs, from the settings
    ``driver_host`` and ``bind_address`` (None: unset); ``ClusterSettingsUnusable`` naming the
    setting to set when executors on other hosts could not reach them.

    The bind address defaults to the driver host. The driver host defaults to 127.0.0.1 for a
    master on this machine, else to this machine's address on the route to the master
    (``route_probe``), which must not be a loopback one.
    """
    refuse_cluster_problems(
        driver_address_problems(
            master_url, driver_host=driver_host, driver_bind_address=bind_address
        )
    )
    master = remote_master(master_url)
    if driver_host:
        host = driver_host
    elif master is None:
        host = LOOPBACK
    else:
        host = _address_on_route(master.host, master.port, route_probe)
    return DriverAddresses(host=host, bind_address=bind_address or host)


def _address_on_route(host: str, port: int, route_probe: RouteProbe) -> str:
    try:
        found = route_probe(host, port)
    except OSError as error:
        raise ClusterSettingsUnusable(
            f"cannot find this machine's address on the route to the standalone master's host "
            f"{host} ({error.strerror or error}), which executors would reach drivers at: set "
            f"{DRIVER_HOST_SETTING} to this machine's address on the cluster's network"
        ) from None
    if is_loopback(found):
        raise ClusterSettingsUnusable(
            f"the standalone master's host {host} is reached from this machine's loopback "
            f"address {found}, which executors on other hosts cannot reach drivers at: set "
            f"{DRIVER_HOST_SETTING} to this machine's address on the cluster's network (or name "
            "the master spark://127.0.0.1:<port> when the whole cluster runs on this machine)"
        )
    return found
