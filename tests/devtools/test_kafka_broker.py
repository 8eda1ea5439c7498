"""The Kafka broker of the tests and ``streamjobs dev kafka``: real, loopback only, cleaned up."""

from __future__ import annotations

import ipaddress
import os
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from streamjobs.devtools.kafka import KafkaBroker, new_cluster_id
from tests.kafka_fixture import start_kafka_broker

pytestmark = pytest.mark.kafka

MESSAGES = 1000
CONSUME_TIMEOUT_SECONDS = 60.0
LISTEN_STATE = "0A"  # TCP_LISTEN in /proc/net/tcp
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def test_the_broker_listens_on_loopback_only(kafka_broker: KafkaBroker) -> None:
    host, port = kafka_broker.bootstrap_servers.rsplit(":", 1)

    assert host == "127.0.0.1"
    assert kafka_broker.controller_port is not None
    for listening_port in (int(port), kafka_broker.controller_port):
        addresses = listening_addresses(listening_port)
        assert addresses
        assert all(_is_ipv4_loopback(address) for address in addresses), addresses


def test_a_thousand_messages_come_back_from_a_new_topic(kafka_broker: KafkaBroker) -> None:
    topic = f"round-trip-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=3)
    sent = {f"key-{number}": f"value-{number}" for number in range(MESSAGES)}

    produce(kafka_broker.bootstrap_servers, topic, sent)

    assert consume(kafka_broker.bootstrap_servers, topic, len(sent)) == sent


def test_stop_ends_the_process_group_and_deletes_the_data() -> None:
    broker = start_kafka_broker()
    assert broker.process is not None
    assert broker.directory is not None
    directory, process_group = broker.directory, broker.process.pid
    assert (directory / "data" / "meta.properties").is_file()

    broker.stop()

    assert not directory.exists()
    with pytest.raises(ProcessLookupError):
        os.killpg(process_group, 0)
    with pytest.raises(RuntimeError, match="not running"):
        _ = broker.bootstrap_servers


def produce(bootstrap_servers: str, topic: str, messages: dict[str, str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap_servers, "enable.idempotence": True})
    for key, value in messages.items():
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0, "messages still unsent after 30s"


def consume(bootstrap_servers: str, topic: str, expected: int) -> dict[str, str]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"test-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    received: dict[str, str] = {}
    deadline = time.monotonic() + CONSUME_TIMEOUT_SECONDS
    try:
        consumer.subscribe([topic])
        while len(received) < expected and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=1.0):
                assert message.error() is None, message.error()
                received[_text(message.key())] = _text(message.value())
    finally:
        consumer.close()
    return received


def listening_addresses(port: int) -> set[IPAddress]:
    """The local addresses of the sockets listening on TCP ``port``, from ``/proc/net``."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].is_file():
        pytest.skip("needs Linux's /proc/net/tcp to see which addresses a port listens on")
    addresses: set[IPAddress] = set()
    for table in tables:
        if table.is_file():
            addresses |= _listening_in(table, port)
    return addresses


def _listening_in(table: Path, port: int) -> set[IPAddress]:
    found: set[IPAddress] = set()
    for line in table.read_text().splitlines()[1:]:
        local_address, state = line.split()[1], line.split()[3]
        hex_address, hex_port = local_address.rsplit(":", 1)
        if state == LISTEN_STATE and int(hex_port, 16) == port:
            found.add(_decode_address(hex_address))
    return found


def _decode_address(hex_address: str) -> IPAddress:
    """``/proc/net/tcp*`` write addresses as hex 32-bit words in the host's (little) endianness."""
    raw = bytes.fromhex(hex_address)
    words = (raw[start : start + 4][::-1] for start in range(0, len(raw), 4))
    return ipaddress.ip_address(b"".join(words))


def _is_ipv4_loopback(address: IPAddress) -> bool:
    """127.0.0.1, also as Java's IPv6 socket shows it (``::ffff:127.0.0.1``)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return isinstance(address, ipaddress.IPv4Address) and address.is_loopback


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def test_cluster_ids_never_start_with_a_dash() -> None:
    ids = [new_cluster_id() for _ in range(2000)]
    assert all(len(cluster_id) == 22 for cluster_id in ids)
    assert not [cluster_id for cluster_id in ids if cluster_id.startswith("-")]
