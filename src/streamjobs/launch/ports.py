"""Free TCP ports on 127.0.0.1 for the servers this machine starts: drivers' UIs, brokers, tests.

A port is found by binding to port 0 and letting the kernel choose. Probes made one after the
other may be handed the same port once the first is closed, so ports a server needs together
are found with their probes all open at once.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack

LOOPBACK = "127.0.0.1"


def free_loopback_ports(count: int) -> list[int]:
    """``count`` different TCP ports on 127.0.0.1 that nothing listens on right now."""
    with ExitStack() as probes:
        ports: list[int] = []
        for _ in range(count):
            probe = probes.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            probe.bind((LOOPBACK, 0))
            ports.append(int(probe.getsockname()[1]))
        return ports


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_loopback_ports(1)[0]
