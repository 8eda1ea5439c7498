"""A driver started by a server that stopped before recording its pid is found again by its
attempt's fence: the wrapper carries the fence on its command line and writes it beside the
exit code. (Without Spark: the wrapper around a sleeping command is all ``recover`` looks at.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.launch.base import DriverHandle, DriverHealth, DriverState
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.wrapper import parse_args, read_exit_code
from tests.launch.conftest import wait_until

FENCE = "5f0c3a1e9b7d4c2a8e6f1b3d5a7c9e0f"


def start_wrapped(directory: Path, fence: str, *command: str) -> subprocess.Popen[bytes]:
    """What the launcher does: the launch record, then the fenced wrapper in its own session."""
    launch = {"fence": fence, "ui_port": 4999, "master": "local[1]"}
    (directory / "launch.json").write_text(json.dumps(launch))
    argv = [sys.executable, "-m", "streamjobs.launch.wrapper"]
    argv += ["--exit-code-file", str(directory / "exit-code"), "--fence", fence, "--", *command]
    return subprocess.Popen(argv, start_new_session=True)


@pytest.fixture
def sleeping(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_wrapped(tmp_path, FENCE, sys.executable, "-c", "import time; time.sleep(120)")
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_a_running_driver_is_found_by_its_fence(
    tmp_path: Path, sleeping: subprocess.Popen[bytes]
) -> None:
    launcher = LocalLauncher()
    found = wait_until(
        lambda: isinstance(h := launcher.recover(tmp_path, FENCE), DriverHandle) and h,
        timeout=60,
        what="the wrapper to be found",
    )
    assert isinstance(found, DriverHandle)
    assert (found.pid, found.ui_port, found.master) == (sleeping.pid, 4999, "local[1]")
    assert launcher.poll(found).state is DriverState.RUNNING


def test_another_fence_finds_nothing(tmp_path: Path, sleeping: subprocess.Popen[bytes]) -> None:
    other = "0" * 32
    assert LocalLauncher().recover(tmp_path, other) == DriverHealth(DriverState.EXITED, None)
    assert LocalLauncher().recover(tmp_path, "") == DriverHealth(DriverState.EXITED, None)


def test_a_driver_that_ended_unwatched_leaves_its_code_under_its_fence(tmp_path: Path) -> None:
    process = start_wrapped(tmp_path, FENCE, sys.executable, "-c", "import sys; sys.exit(4)")
    assert process.wait(timeout=60) == 4
    assert LocalLauncher().recover(tmp_path, FENCE) == DriverHealth(DriverState.EXITED, 4)
    assert read_exit_code(tmp_path / "exit-code", FENCE) == 4
    assert read_exit_code(tmp_path / "exit-code", "another") is None
    assert read_exit_code(tmp_path / "exit-code") == 4


def test_no_launch_record_means_no_driver_was_started(tmp_path: Path) -> None:
    assert LocalLauncher().recover(tmp_path, FENCE) == DriverHealth(DriverState.EXITED, None)


def test_the_fenced_command_line_is_read_directly() -> None:
    parsed = parse_args(["--exit-code-file", "/a/exit-code", "--fence", "f1", "--", "cmd", "x"])
    assert (parsed.exit_code_file, parsed.fence, parsed.command) == (
        Path("/a/exit-code"),
        "f1",
        ["cmd", "x"],
    )
    plain = parse_args(["--exit-code-file", "/a/exit-code", "--", "cmd"])
    assert (plain.fence, plain.command) == ("", ["cmd"])
