"""A real single-node Apache Kafka broker, started from jars that Maven resolves.

The tests and ``streamjobs dev kafka`` need a Kafka broker on this machine without Docker or a
Kafka download: ``KafkaBroker`` resolves ``kafka_2.13`` with ``mvn`` (cached in
``~/.m2/repository``; a warm cache needs no network), writes a ``server.properties`` for one
KRaft node that is both broker and controller, formats its storage, and runs ``kafka.Kafka`` with
``java`` in its own process group. Both listeners bind to 127.0.0.1 only, on free ports, unless
``host`` names another address of this machine (the multi-host tests bind it to their private
network's bridge, so that network namespaces reach it). Its configuration, log (``broker.log``) and
data live in one temporary directory that ``stop()`` deletes.

A broker started with ``bound_to_starter=True`` (``streamjobs dev kafka``) also dies with the
thread that started it, however that ends, SIGKILL included: Linux sends the JVM a SIGKILL when
its parent goes (``PR_SET_PDEATHSIG``, set between fork and exec). Its own session keeps it out
of the terminal's Ctrl-C; elsewhere than on Linux, ``stop()`` is the only way it ends. A SIGKILL
leaves the temporary directory behind (under the system's temporary directory).

    with KafkaBroker() as broker:
        broker.create_topic("orders", partitions=3)
        produce_to(broker.bootstrap_servers)
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import ctypes.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from streamjobs.devtools.maven import find_program, resolve_classpath
from streamjobs.launch.ports import free_loopback_ports

# Kafka 4.x brokers run on Java 17. 4.4.0 is out, but its kafka-tools-api jar is missing from the
# Maven Central these machines reach; 4.3.1 resolves whole.
KAFKA_VERSION = "4.3.1"
BROKER_COORDINATES = (
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    # Kafka logs through SLF4J 1.7; without this binding the broker would log nothing.
    "org.apache.logging.log4j:log4j-slf4j-impl:2.25.4",
)
JVM_OPTIONS = ("-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true")
HOST = "127.0.0.1"
NODE_ID = 1
STOP_GRACE_SECONDS = 30.0
LOG_LINES_IN_ERRORS = 40
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# librdkafka logs "connection refused" while the broker starts; Python's logging, not stderr.
_client_log = logging.getLogger(__name__)

_LOG4J2_PROPERTIES = """status = warn
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.console.ref = console
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""


class BrokerStartError(Exception):
    """The broker did not start or did not become ready; the message ends with its log."""


class KafkaBroker:
    """One KRaft node (broker and controller) on 127.0.0.1 (or ``host``), with its data in a
    temporary dir."""

    def __init__(
        self,
        port: int | None = None,
        startup_timeout: float = 120.0,
        *,
        bound_to_starter: bool = False,
        host: str = HOST,
    ) -> None:
        """``bound_to_starter``: the broker is killed when the thread calling ``start`` ends
        (on Linux), so a starter killed with SIGKILL leaves no broker behind; only for a
        starter whose thread lives as long as the broker should (a command's main thread).
        ``host``: the address of this machine both listeners bind to and clients are told."""
        self.host = host
        self.port = port
        self.bound_to_starter = bound_to_starter
        self.controller_port: int | None = None
        self.startup_timeout = startup_timeout
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of the broker's listener, for producers, consumers and Spark."""
        if self.port is None or self.process is None:
            raise RuntimeError("the Kafka broker is not running; call start() first")
        return f"{self.host}:{self.port}"

    @property
    def log_file(self) -> Path:
        """Where the broker's (and the storage formatter's) output goes."""
        if self.directory is None:
            raise RuntimeError("the Kafka broker has no directory; call start() first")
        return self.directory / "broker.log"

    def start(self) -> KafkaBroker:
        """Resolve the jars, format the storage, start the broker and wait until it is ready."""
        java = find_program("java", install_hint="apt-get install openjdk-17-jre-headless")
        classpath = os.pathsep.join(str(jar) for jar in resolve_classpath(BROKER_COORDINATES))
        self.port, self.controller_port = self._listener_ports()
        self.directory = Path(tempfile.mkdtemp(prefix="streamjobs-kafka-"))
        try:
            config = self._write_config()
            java_command = [java, *self._jvm_options(), "-cp", classpath]
            self._format_storage(java_command, config)
            self.process = self._launch(java_command, config)
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM the broker's process group, SIGKILL it after a grace period, delete the data."""
        if self.process is not None:
            terminate_process_group(self.process, STOP_GRACE_SECONDS)
            self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def create_topic(self, name: str, partitions: int = 1, timeout: float = 30.0) -> None:
        """Create topic ``name``; it is ready on the broker when this returns."""
        admin = self._admin()  # the futures need their client alive until they are done
        topic = NewTopic(name, num_partitions=partitions, replication_factor=1)
        futures = admin.create_topics([topic], operation_timeout=timeout)
        futures[name].result(timeout=timeout)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _admin(self) -> AdminClient:
        return AdminClient({"bootstrap.servers": self.bootstrap_servers}, logger=_client_log)

    def _listener_ports(self) -> tuple[int, int]:
        """The broker's port (the one given, if any) and a different one for the controller."""
        if self.port is None:
            broker, controller = self._free_ports()
            return broker, controller
        controller = next(port for port in self._free_ports() if port != self.port)
        return self.port, controller

    def _free_ports(self) -> list[int]:
        if self.host == HOST:
            return free_loopback_ports(2)
        with ExitStack() as probes:  # both probes open at once: two different ports
            ports: list[int] = []
            for _ in range(2):
                probe = probes.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                probe.bind((self.host, 0))
                ports.append(int(probe.getsockname()[1]))
            return ports

    def _write_config(self) -> Path:
        assert self.directory is not None
        assert self.port is not None
        assert self.controller_port is not None
        (self.directory / "log4j2.properties").write_text(_LOG4J2_PROPERTIES, encoding="utf-8")
        settings = server_properties(
            self.directory / "data", self.port, self.controller_port, host=self.host
        )
        config = self.directory / "server.properties"
        lines = (f"{key}={value}" for key, value in settings.items())
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return config

    def _jvm_options(self) -> list[str]:
        assert self.directory is not None
        log_config = f"-Dlog4j2.configurationFile={self.directory / 'log4j2.properties'}"
        return [*JVM_OPTIONS, log_config]

    def _format_storage(self, java_command: list[str], config: Path) -> None:
        """What ``kafka-storage.sh format`` does, with a new cluster id and the static voter."""
        arguments = ["format", "--config", str(config), "--cluster-id", new_cluster_id()]
        with self.log_file.open("ab") as log:
            formatted = subprocess.run(
                [*java_command, "kafka.tools.StorageTool", *arguments],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=self.startup_timeout,
                preexec_fn=self._preexec(),
            )
        if formatted.returncode != 0:
            raise BrokerStartError(f"formatting the Kafka storage failed\n{self._log_tail()}")

    def _launch(self, java_command: list[str], config: Path) -> subprocess.Popen[bytes]:
        """Start ``kafka.Kafka`` in a new session, so that it leads its own process group."""
        with self.log_file.open("ab") as log:
            return subprocess.Popen(
                [*java_command, "kafka.Kafka", str(config)],
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=self._preexec(),
            )

    def _preexec(self) -> Callable[[], None] | None:
        if not self.bound_to_starter:
            return None
        return die_with_parent(os.getpid())

    def _wait_until_ready(self) -> None:
        """Poll the broker's metadata until it answers, the process dies or time runs out."""
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        admin = self._admin()
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerStartError(
                    f"the Kafka broker exited with code {self.process.returncode}\n"
                    f"{self._log_tail()}"
                )
            try:
                if admin.list_topics(timeout=2).brokers:
                    return
            except KafkaException:
                time.sleep(0.2)
        raise BrokerStartError(
            f"the Kafka broker was not ready after {self.startup_timeout:.0f}s\n{self._log_tail()}"
        )

    def _log_tail(self) -> str:
        if self.directory is None or not self.log_file.is_file():
            return "(no broker log)"
        lines = self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join([f"last lines of {self.log_file}:", *lines[-LOG_LINES_IN_ERRORS:]])


def server_properties(
    data_dir: Path, port: int, controller_port: int, *, host: str = HOST
) -> dict[str, str]:
    """The settings of a combined broker and controller node listening on ``host`` only."""
    return {
        "process.roles": "broker,controller",
        "node.id": str(NODE_ID),
        "controller.quorum.voters": f"{NODE_ID}@{host}:{controller_port}",
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir),
        # One node: internal topics cannot have more than one replica.
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }


def new_cluster_id() -> str:
    """A random cluster id in Kafka's format: 16 bytes, URL-safe base64 without padding, and
    never starting with ``-``, which ``kafka-storage format --cluster-id`` would take for an
    option (Kafka's own ``Uuid.randomUuid`` draws again for the same reason)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def terminate_process_group(process: subprocess.Popen[bytes], grace_seconds: float) -> None:
    """SIGTERM the group that ``process`` leads; SIGKILL it if still there after the grace."""
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        _signal_group(process.pid, signal.SIGKILL)
        process.wait()


def die_with_parent(parent: int) -> Callable[[], None]:
    """What a child runs between fork and exec so that the kernel SIGKILLs it when ``parent``
    (the thread that forked it) ends; a child whose parent already ended kills itself. Does
    nothing where ``prctl`` is missing (not Linux)."""
    library = ctypes.util.find_library("c")
    libc = ctypes.CDLL(library, use_errno=True) if library else None
    prctl = getattr(libc, "prctl", None)

    def bind() -> None:
        if prctl is None:
            return
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return bind


def _signal_group(process_group: int, signal_number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group is gone already
        os.killpg(process_group, signal_number)
