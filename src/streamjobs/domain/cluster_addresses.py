"""Whether the hosts of a standalone cluster can reach this server and its drivers.

With the master and workers on this machine (``spark://127.0.0.1:7077``) everything talks over
the loopback address, as it always did. With a master on another host, executors run elsewhere
and connect back to the driver, and cluster-mode drivers report to the server from a worker: a
loopback address there names the other host itself. So a remote master needs a public URL and
a driver address that are not loopback; ``cluster_address_problems`` says, setting by setting,
what is wrong and what to set. The server refuses to start with any of them, and Run refuses a
``deployment: standard`` job while one holds (``deployment_rules.cluster_settings_errors``).

A host is judged by how it is written (no name is looked up here): loopback IP addresses and
``localhost`` are this machine only; any other name or address may be another host.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from streamjobs.domain.errors import StreamjobsError

LOOPBACK = "127.0.0.1"
PUBLIC_URL_SETTING = "STREAMJOBS_PUBLIC_URL"
SERVER_HOST_SETTING = "STREAMJOBS_HOST"
DRIVER_HOST_SETTING = "STREAMJOBS_DRIVER_HOST"
DRIVER_BIND_ADDRESS_SETTING = "STREAMJOBS_DRIVER_BIND_ADDRESS"
MASTER_SCHEME = "spark://"


class ClusterSettingsUnusable(StreamjobsError):
    """The server's settings cannot work with its standalone cluster (a master on another host
    and a loopback public URL or driver address...): the detail names each setting to set."""

    title = "Cluster settings unusable"


@dataclass(frozen=True)
class MasterAddress:
    """One master of a standalone master URL (several for a master with standbys)."""

    host: str
    port: int


def master_addresses(master_url: str) -> list[MasterAddress]:
    """The masters of ``spark://host:port`` or ``spark://h1:p1,h2:p2`` (masters with standbys);
    empty for anything else (``local[N]``)."""
    if not master_url.startswith(MASTER_SCHEME):
        return []
    addresses = []
    for entry in master_url.removeprefix(MASTER_SCHEME).split(","):
        parts = urlsplit(f"//{entry.strip()}")
        try:
            port = parts.port or 7077
        except ValueError:
            continue
        if parts.hostname:
            addresses.append(MasterAddress(parts.hostname, port))
    return addresses


def remote_master(master_url: str | None) -> MasterAddress | None:
    """The first master of ``master_url`` that may be on another host; None when every master
    is on this machine (or there is none)."""
    if not master_url:
        return None
    return next((m for m in master_addresses(master_url) if not is_loopback(m.host)), None)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost`` (and ``*.localhost``), a loopback
    IPv4 or IPv6 address."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_unspecified(host: str) -> bool:
    """Whether ``host`` is the "any address" of a listener (``0.0.0.0``, ``::``): no other host
    can connect to it."""
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_unspecified
    except ValueError:
        return False


def unreachable_from_elsewhere(host: str) -> bool:
    """Whether another host could never connect to ``host``: loopback, or unspecified."""
    return is_loopback(host) or is_unspecified(host)


def cluster_address_problems(
    *,
    master_url: str | None,
    public_url: str,
    public_url_set: bool,
    driver_host: str | None,
    driver_bind_address: str | None,
) -> list[str]:
    """What keeps the cluster of ``master_url`` from reaching this server or its drivers, each
    naming the setting to set; empty when nothing does (always for a master on this machine).

    ``public_url`` is the URL drivers report to (``public_url_set``: given as
    ``STREAMJOBS_PUBLIC_URL``, else made of ``STREAMJOBS_HOST`` and the port);
    ``driver_host`` and ``driver_bind_address`` are the settings as given (None: unset).
    """
    return [
        *public_url_problems(master_url, public_url=public_url, public_url_set=public_url_set),
        *driver_address_problems(
            master_url, driver_host=driver_host, driver_bind_address=driver_bind_address
        ),
    ]


def public_url_problems(
    master_url: str | None, *, public_url: str, public_url_set: bool
) -> list[str]:
    """The public URL drivers report to, when the cluster's hosts could not reach it."""
    master = remote_master(master_url)
    public_host = urlsplit(public_url).hostname or ""
    if master is None or not unreachable_from_elsewhere(public_host):
        return []
    if public_url_set:
        given = f"{PUBLIC_URL_SETTING}={public_url} is an address no other host reaches"
    else:
        given = (
            f"{PUBLIC_URL_SETTING} is unset, so drivers would report to {public_url} (made "
            f"of {SERVER_HOST_SETTING}), an address no other host reaches"
        )
    return [
        f"{_remote(master_url, master)}, but {given}: drivers on the cluster's hosts could not "
        f"report to this server. Set {PUBLIC_URL_SETTING} to a URL of this server that the "
        f"cluster's hosts reach (http://<this machine's address>:<port>), and "
        f"{SERVER_HOST_SETTING} to an address the server listens on there (0.0.0.0 for every "
        "address)"
    ]


def driver_address_problems(
    master_url: str | None, *, driver_host: str | None, driver_bind_address: str | None
) -> list[str]:
    """The driver host and bind address settings, when executors on the cluster's other hosts
    could not connect to a driver at them."""
    master = remote_master(master_url)
    if master is None:
        return []
    problems = []
    if driver_host is not None and unreachable_from_elsewhere(driver_host):
        problems.append(
            f"{_remote(master_url, master)}, but {DRIVER_HOST_SETTING}={driver_host} is an "
            f"address executors on other hosts cannot reach a driver at. Set "
            f"{DRIVER_HOST_SETTING} to this machine's address on the cluster's network, or unset "
            "it to use this machine's address on the route to the master"
        )
    if driver_bind_address is not None and is_loopback(driver_bind_address):
        problems.append(
            f"{_remote(master_url, master)}, but {DRIVER_BIND_ADDRESS_SETTING}="
            f"{driver_bind_address} makes drivers listen on a loopback address, where executors "
            f"on other hosts cannot connect. Set {DRIVER_BIND_ADDRESS_SETTING} to the driver "
            f"host's address or 0.0.0.0, or unset it to listen on {DRIVER_HOST_SETTING}"
        )
    return problems


def _remote(master_url: str | None, master: MasterAddress) -> str:
    return f"the standalone master {master_url} is on another host ({master.host})"


def refuse_cluster_problems(problems: list[str]) -> None:
    """``ClusterSettingsUnusable`` listing ``problems``, if there are any."""
    if len(problems) == 1:
        raise ClusterSettingsUnusable(f"cannot use the standalone cluster: {problems[0]}")
    if problems:
        listed = "\n".join(f"  {problem}" for problem in problems)
        raise ClusterSettingsUnusable(
            f"cannot use the standalone cluster, {len(problems)} problems:\n{listed}"
        )
