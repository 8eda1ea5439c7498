"""``streamjobs dev kafka`` never leaves its broker behind, even when it is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from streamjobs.devtools.kafka import die_with_parent

pytestmark = pytest.mark.kafka

READY_SECONDS = 180.0
GONE_SECONDS = 60.0
READY_LINE = "Kafka broker on"


@pytest.fixture
def dev_kafka() -> Iterator[subprocess.Popen[str]]:
    """``streamjobs dev kafka`` running, with its broker ready; whatever is left is killed."""
    command = subprocess.Popen(
        [sys.executable, "-m", "streamjobs.cli", "dev", "kafka"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    leftovers = _descendants(command.pid)
    data: Path | None = None
    try:
        data = _data_directory(_wait_for_ready_line(command))
        leftovers += _descendants(command.pid)
        yield command
    finally:
        leftovers += _descendants(command.pid)
        command.kill()
        for process in leftovers:  # psutil refuses a pid that another process took since
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        command.wait(timeout=30)
        if data is not None:  # a SIGKILL leaves it, as the command's help says
            shutil.rmtree(data, ignore_errors=True)


def test_a_sigkilled_dev_kafka_takes_its_broker_with_it(dev_kafka: subprocess.Popen[str]) -> None:
    brokers = [child for child in psutil.Process(dev_kafka.pid).children() if _is_java(child)]
    assert len(brokers) == 1, "the command runs one broker JVM"
    broker = brokers[0]
    assert broker.is_running()

    os.kill(dev_kafka.pid, signal.SIGKILL)
    dev_kafka.wait(timeout=30)

    deadline = time.monotonic() + GONE_SECONDS
    while _alive(broker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(broker), f"the broker (pid {broker.pid}) outlived its command"


def test_a_child_whose_parent_is_gone_already_kills_itself() -> None:
    """The race ``die_with_parent`` closes: the parent died before the child could ask (here:
    the child is told of a parent that is not its own, as if its own had gone and it had been
    given to another)."""
    child = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent(os.getpid() + 1))
    assert child.wait(timeout=30) == -signal.SIGKILL


def test_an_unbound_child_lives_on() -> None:
    child = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent(os.getpid()))
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)
    finally:
        child.kill()
        child.wait()


def _wait_for_ready_line(command: subprocess.Popen[str]) -> str:
    assert command.stdout is not None
    deadline = time.monotonic() + READY_SECONDS
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = command.stdout.readline()
        if not line and command.poll() is not None:
            break
        seen.append(line)
        if READY_LINE in line:
            return line
    if any("cannot start the Kafka broker" in line for line in seen):
        from tests.conftest import skip_or_fail

        skip_or_fail("".join(seen))
    raise AssertionError(f"`streamjobs dev kafka` did not get ready:\n{''.join(seen)}")


def _data_directory(ready_line: str) -> Path | None:
    """The broker's temporary directory, from "… (KRaft, data in /tmp/streamjobs-kafka-…)."."""
    _, found, rest = ready_line.partition("data in ")
    return Path(rest.split(")")[0]) if found else None


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _is_java(process: psutil.Process) -> bool:
    try:
        return Path(process.cmdline()[0]).name == "java" and "kafka.Kafka" in process.cmdline()
    except (psutil.NoSuchProcess, IndexError):
        return False


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
