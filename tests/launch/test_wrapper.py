"""The wrapper leads a driver's process group and leaves its exit code in a file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from streamjobs.launch.wrapper import exit_code_of, read_exit_code
from tests.launch.conftest import wait_until


def wrapper(exit_code_file: Path, *command: str, **popen: object) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "streamjobs.launch.wrapper"]
    argv += ["--exit-code-file", str(exit_code_file), "--", *command]
    return subprocess.Popen(argv, **popen)  # type: ignore[call-overload, no-any-return]


def test_the_commands_exit_code_is_written_and_returned(tmp_path: Path) -> None:
    exit_code_file = tmp_path / "exit-code"
    process = wrapper(exit_code_file, sys.executable, "-c", "import sys; sys.exit(3)")

    assert process.wait(timeout=60) == 3
    assert read_exit_code(exit_code_file) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["exit-code"]


def test_a_death_by_signal_is_written_as_a_shell_says_it(tmp_path: Path) -> None:
    exit_code_file = tmp_path / "exit-code"
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    process = wrapper(exit_code_file, sys.executable, "-c", suicide)

    assert process.wait(timeout=60) == 128 + signal.SIGKILL
    assert read_exit_code(exit_code_file) == 137
    assert exit_code_of(-15) == 143
    assert exit_code_of(2) == 2


def test_sigterm_to_the_group_ends_the_command_and_the_wrapper_records_it(
    tmp_path: Path,
) -> None:
    exit_code_file = tmp_path / "exit-code"
    started = tmp_path / "started"
    sleeper = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(120)"
    process = wrapper(exit_code_file, sys.executable, "-c", sleeper, start_new_session=True)
    try:
        wait_until(started.exists, timeout=60, what="the command to start")
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert read_exit_code(exit_code_file) == 143


def test_a_command_that_does_not_exist_exits_127(tmp_path: Path) -> None:
    exit_code_file = tmp_path / "exit-code"
    process = wrapper(exit_code_file, str(tmp_path / "no-such-program"), stderr=subprocess.PIPE)
    _, stderr = process.communicate(timeout=60)

    assert process.returncode == 127
    assert read_exit_code(exit_code_file) == 127
    assert b"no-such-program" in stderr
