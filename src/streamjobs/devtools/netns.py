"""A private network of "hosts" on this machine, made of Linux network namespaces, for tests of
what crosses hosts: a Spark master and workers, streamjobs servers, drivers that lose their host.

``PrivateNetwork`` (as root) creates a bridge in the root namespace that carries the ``.1`` address
of a private /24 (``10.213.<random>.0/24``, one that no address or route of this machine overlaps),
and for each host a named namespace (``ip netns add``) joined to the bridge by a veth pair, with its
own address, ``lo`` up and a default route via ``.1``. Services in the root namespace that listen on
``.1`` (a Kafka broker, PostgreSQL) are reachable from every host; the root namespace reaches every
host's address. ``tear_down(host)`` cuts a host's cable and SIGKILLs everything in it: a lost host.

What a machine may need, handled here:
- ``br_netfilter`` hands bridged frames to iptables (``net.bridge.bridge-nf-call-iptables=1``),
  where a FORWARD policy of DROP (Docker sets one) would drop host-to-host traffic. When
  ``iptables`` is installed, rules accepting the bridge's traffic are added and removed on close.
- A bridge takes the lowest MAC of its ports unless given one; losing that port would change the
  ``.1`` MAC behind the hosts' ARP caches, so the bridge gets a fixed MAC.
- ``verify()`` proves with TCP connections, from inside each namespace, that the hosts reach
  ``.1`` and each other, and says what to check when they do not.

Names carry a random suffix (interface names stay within 15 characters), so networks of parallel
runs do not meet; the bridge's alias records the owning process, and a new network first removes
the leftovers of owners that died without closing theirs.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

from streamjobs.domain.errors import StreamjobsError

SUBNET_PREFIX = "10.213"
GATEWAY_INDEX = 1
FIRST_HOST_INDEX = 10
LAST_HOST_INDEX = 254
OWNER_ALIAS = "streamjobs-netns owner="
NAME_PREFIX = "sj"
HOST_NAME = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
INNER_INTERFACE = "eth0"
KILL_WAIT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 5.0

# Prints the port it listens on, then holds it until its stdin closes.
_LISTEN = (
    "import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(64); "
    "print(s.getsockname()[1], flush=True); sys.stdin.read()"
)
_CONNECT = (
    "import socket, sys\n"
    "from concurrent.futures import ThreadPoolExecutor\n"
    "def failure(target):\n"
    "    host, port = target.rsplit(':', 1)\n"
    "    try:\n"
    "        socket.create_connection((host, int(port)), timeout=float(sys.argv[1])).close()\n"
    "    except OSError as error:\n"
    "        return f'{target}: {error}'\n"
    "with ThreadPoolExecutor(len(sys.argv)) as pool:\n"
    "    failed = [found for found in pool.map(failure, sys.argv[2:]) if found]\n"
    "print('; '.join(failed))\n"
    "sys.exit(1 if failed else 0)\n"
)


class NetworkSetupError(StreamjobsError):
    """The private network could not be built, or its hosts cannot reach each other."""

    title = "Network setup failed"


@dataclass(frozen=True)
class Host:
    """One namespace of the network: a "machine" with its own address."""

    name: str
    namespace: str
    address: str
    veth: str
    """The root namespace's end of the host's cable, a port of the bridge."""

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def free_port(self) -> int:
        """A TCP port nothing listens on at this host's address right now."""
        found = _run(self.command([sys.executable, "-c", _LISTEN, self.address]))
        return int(found.strip())


class PrivateNetwork:
    """A bridge with the ``.1`` address of a private /24 and hosts (namespaces) on it."""

    def __init__(self) -> None:
        self.suffix = secrets.token_hex(3)
        self.bridge = f"{NAME_PREFIX}br{self.suffix}"
        self.subnet: ipaddress.IPv4Network | None = None
        self.hosts: dict[str, Host] = {}
        self._next_index = FIRST_HOST_INDEX
        self._iptables_rules: list[list[str]] = []
        self._bridge_created = False

    @property
    def gateway(self) -> str:
        """The root namespace's address on the network (``.1``): where its services listen."""
        return str(self._subnet[GATEWAY_INDEX])

    @property
    def prefix_length(self) -> int:
        return self._subnet.prefixlen

    def start(self) -> PrivateNetwork:
        """Create the bridge; ``close()`` undoes whatever was done when this fails."""
        problem = namespace_support_problem()
        if problem is not None:
            raise NetworkSetupError(f"cannot build a private network: {problem}")
        remove_leftovers()
        try:
            self.subnet = _unused_subnet()
            mac = "02:" + ":".join(f"{random.randrange(256):02x}" for _ in range(5))
            _run(["ip", "link", "add", "name", self.bridge, "address", mac, "type", "bridge"])
            self._bridge_created = True
            _run(["ip", "link", "set", self.bridge, "alias", f"{OWNER_ALIAS}{os.getpid()}"])
            _run(["ip", "addr", "add", f"{self.gateway}/{self.prefix_length}", "dev", self.bridge])
            _run(["ip", "link", "set", self.bridge, "up"])
            self._accept_bridged_traffic()
        except BaseException:
            self.close()
            raise
        return self

    def add_host(self, name: str) -> Host:
        """A new namespace joined to the bridge, with the next free address of the /24."""
        if not HOST_NAME.match(name):
            raise NetworkSetupError(
                f"host name {name!r}: use a lowercase letter then up to 19 lowercase letters, "
                "digits or '-'"
            )
        if name in self.hosts:
            raise NetworkSetupError(f"host name {name!r}: the network has a host of that name")
        if self._next_index > LAST_HOST_INDEX:
            raise NetworkSetupError(f"no address left in {self._subnet} for host {name!r}")
        address = str(self._subnet[self._next_index])
        host = Host(
            name=name,
            namespace=f"{NAME_PREFIX}{self.suffix}-{name}",
            address=address,
            veth=f"{NAME_PREFIX}{self.suffix}h{self._next_index}",
        )
        self._next_index += 1
        self.hosts[name] = host
        try:
            _join(host, self.bridge, self.gateway, self.prefix_length)
        except BaseException:
            self.tear_down(host)
            raise
        return host

    def tear_down(self, host: Host) -> None:
        """Lose ``host``: cut its cable, SIGKILL every process in it, delete its namespace."""
        _attempt(["ip", "link", "del", host.veth])
        _kill_everything_in(host.namespace)
        _attempt(["ip", "netns", "del", host.namespace])
        self.hosts.pop(host.name, None)

    def verify(self) -> None:
        """Every host reaches ``.1`` and every other host over TCP, or NetworkSetupError."""
        with contextlib.ExitStack() as stack:
            gateway = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            gateway.bind((self.gateway, 0))
            gateway.listen(64)
            targets = {"the bridge (.1)": f"{self.gateway}:{gateway.getsockname()[1]}"}
            for host in self.hosts.values():
                targets[host.name] = f"{host.address}:{_listen_in(host, stack)}"
            attempts = {}
            for host in self.hosts.values():
                others = [target for name, target in targets.items() if name != host.name]
                attempts[host.name] = subprocess.Popen(
                    host.command(
                        [sys.executable, "-c", _CONNECT, str(CONNECT_TIMEOUT_SECONDS), *others]
                    ),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            failures = []
            for name, attempt in attempts.items():
                output, errors = attempt.communicate()
                if attempt.returncode != 0:
                    failures.append(f"from {name}: {output.strip()}{errors}")
        if failures:
            raise NetworkSetupError(
                "the private network's hosts cannot reach each other ("
                + "; ".join(failures)
                + "). Check the firewall of bridged traffic: br_netfilter sends it through "
                "iptables when net.bridge.bridge-nf-call-iptables=1 (accept it on "
                f"{self.bridge}, or set that sysctl to 0)"
            )

    def close(self) -> None:
        """Remove every host, the bridge and the firewall rules; safe to call again."""
        failures: list[NetworkSetupError] = []
        for host in list(self.hosts.values()):
            try:
                self.tear_down(host)
            except NetworkSetupError as failure:  # remove the rest all the same
                failures.append(failure)
                self.hosts.pop(host.name, None)
        for rule in reversed(self._iptables_rules):
            _attempt(["iptables", "-D", *rule])
        self._iptables_rules.clear()
        if self._bridge_created:
            _attempt(["ip", "link", "del", self.bridge])
            self._bridge_created = False
        if failures:
            raise failures[0]

    def __enter__(self) -> PrivateNetwork:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def _subnet(self) -> ipaddress.IPv4Network:
        if self.subnet is None:
            raise NetworkSetupError("the private network is not started; call start() first")
        return self.subnet

    def _accept_bridged_traffic(self) -> None:
        """Accept host-to-host and host-to-.1 traffic ahead of any iptables rule that drops it."""
        if shutil.which("iptables") is None:
            return  # no iptables rules to get past; verify() tells if something else drops
        comment = ["-m", "comment", "--comment", f"{OWNER_ALIAS}{os.getpid()}"]
        for rule in (
            ["FORWARD", "-i", self.bridge, "-o", self.bridge, "-j", "ACCEPT", *comment],
            ["INPUT", "-i", self.bridge, "-j", "ACCEPT", *comment],
        ):
            if _attempt(["iptables", "-I", *rule]) is not None:
                self._iptables_rules.append(rule)


def namespace_support_problem() -> str | None:
    """Why this process cannot build a private network (not root, no ``ip``, namespaces or
    veth pairs refused), or None when it can: a throwaway namespace and veth pair are made."""
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux only (this is {sys.platform})"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    if shutil.which("ip") is None:
        return "the `ip` program (iproute2) is missing; apt-get install iproute2"
    probe = f"{NAME_PREFIX}probe{secrets.token_hex(3)}"
    try:
        _run(["ip", "netns", "add", probe])
        try:
            _run(["ip", "link", "add", probe, "type", "veth", "peer", "name", "p", "netns", probe])
            _run(["ip", "link", "del", probe])
        finally:
            _attempt(["ip", "netns", "del", probe])
    except NetworkSetupError as refused:
        return str(refused)
    return None


def can_create_namespaces() -> bool:
    """Whether this process can build a ``PrivateNetwork``."""
    return namespace_support_problem() is None


def remove_leftovers() -> None:
    """Delete the bridges and namespaces of networks whose owning process is gone."""
    listed = _attempt(["ip", "-j", "link", "show", "type", "bridge"]) or "[]"
    namespaces = _namespaces()
    for link in json.loads(listed):
        owner = str(link.get("ifalias", ""))
        name = str(link.get("ifname", ""))
        if not owner.startswith(OWNER_ALIAS) or _alive(owner.removeprefix(OWNER_ALIAS)):
            continue
        suffix = name.removeprefix(f"{NAME_PREFIX}br")
        for namespace in namespaces:
            if namespace.startswith(f"{NAME_PREFIX}{suffix}-"):
                _kill_everything_in(namespace)
                _attempt(["ip", "netns", "del", namespace])
        _attempt(["ip", "link", "del", name])


def _join(host: Host, bridge: str, gateway: str, prefix_length: int) -> None:
    _run(["ip", "netns", "add", host.namespace])
    _run(
        [
            *("ip", "link", "add", host.veth, "type", "veth"),
            *("peer", "name", INNER_INTERFACE, "netns", host.namespace),
        ]
    )
    _run(["ip", "link", "set", host.veth, "master", bridge, "up"])
    inside = ["ip", "-n", host.namespace]
    _run([*inside, "addr", "add", f"{host.address}/{prefix_length}", "dev", INNER_INTERFACE])
    _run([*inside, "link", "set", "lo", "up"])
    _run([*inside, "link", "set", INNER_INTERFACE, "up"])
    _run([*inside, "route", "add", "default", "via", gateway])


def _listen_in(host: Host, stack: contextlib.ExitStack) -> int:
    """Start a listener at ``host``'s address, kept until ``stack`` closes; its port."""
    listener = subprocess.Popen(
        host.command([sys.executable, "-c", _LISTEN, host.address]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stack.callback(_end_listener, listener)
    assert listener.stdout is not None
    line = listener.stdout.readline().strip()
    if not line.isdigit():
        raise NetworkSetupError(f"cannot listen on {host.address} in {host.namespace}: {line}")
    return int(line)


def _end_listener(listener: subprocess.Popen[str]) -> None:
    listener.kill()
    listener.communicate()


def _kill_everything_in(namespace: str) -> None:
    """SIGKILL the namespace's processes until none is left (they may fork meanwhile)."""
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    while time.monotonic() < deadline:
        listed = _attempt(["ip", "netns", "pids", namespace]) or ""
        pids = [int(pid) for pid in listed.split()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    raise NetworkSetupError(f"processes in namespace {namespace} survived SIGKILL")


def _namespaces() -> list[str]:
    listed = _attempt(["ip", "netns", "list"]) or ""
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def _unused_subnet() -> ipaddress.IPv4Network:
    """A ``10.213.<n>.0/24`` that no address or route of this machine overlaps."""
    taken = []
    listings = (["ip", "-4", "-j", "addr"], ["ip", "-4", "-j", "route", "show", "table", "all"])
    for listing in listings:
        for entry in json.loads(_run(listing)):
            for info in entry.get("addr_info", []):
                taken.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", False))
            destination = entry.get("dst")
            if destination and destination != "default":
                with contextlib.suppress(ValueError):
                    taken.append(ipaddress.ip_network(destination, strict=False))
    for third in random.sample(range(256), 256):
        candidate = ipaddress.IPv4Network(f"{SUBNET_PREFIX}.{third}.0/24")
        if not any(candidate.overlaps(network) for network in taken):
            return candidate
    raise NetworkSetupError(f"every {SUBNET_PREFIX}.<n>.0/24 is in use on this machine")


def _alive(pid: str) -> bool:
    return pid.isdigit() and os.path.exists(f"/proc/{pid}")


def _run(argv: Sequence[str]) -> str:
    """``argv``'s output; NetworkSetupError with its message when it fails."""
    done = subprocess.run(
        list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise NetworkSetupError(
            f"`{' '.join(argv)}` failed (exit {done.returncode}): {done.stderr.strip()}"
        )
    return done.stdout


def _attempt(argv: Sequence[str]) -> str | None:
    """``argv``'s output, or None when it fails (what is undone may be gone already)."""
    done = subprocess.run(
        list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None
