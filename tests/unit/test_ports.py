"""Ports found together are different, so two listeners of one server never ask for the same."""

from __future__ import annotations

import socket

from streamjobs.launch.ports import LOOPBACK, free_loopback_port, free_loopback_ports


def test_ports_found_together_are_all_different_and_free() -> None:
    ports = free_loopback_ports(64)

    assert len(set(ports)) == len(ports)
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
            listener.bind((LOOPBACK, port))


def test_a_port_in_use_is_not_found() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind((LOOPBACK, 0))
        listener.listen()
        taken = listener.getsockname()[1]

        assert taken not in free_loopback_ports(64)
        assert free_loopback_port() != taken
