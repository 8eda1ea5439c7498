"""``python -m streamjobs.launch.wrapper --exit-code-file F -- <command...>``: a driver's parent.

A driver's exit code is visible only to its parent, and the server that started a driver may
have been restarted since: the process that polls is then not the parent. So every driver runs
under this wrapper, which leads its process group, waits for the command and writes the exit
code to a file (atomically) before exiting with that same code. A death by signal N is written
as 128 + N, as a shell reports it.

The wrapper outlives SIGINT and SIGTERM sent to its process group: the command, in the same
group, gets them too and decides what they mean; the wrapper stays to record the outcome.
SIGKILL ends the wrapper as well, and then no exit code is written.

The wrapper is on the path of every start and restart (before ``spark-submit``), so it imports
little: no ``tempfile``, and ``argparse`` only for ``--help`` and malformed command lines; the
``streamjobs`` package it lives in reads its version lazily for the same reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

COMMAND_NOT_FOUND = 127
COMMAND_NOT_EXECUTABLE = 126


def exit_code_of(returncode: int) -> int:
    """A ``Popen.returncode`` as a shell reports it: a death by signal N (-N) is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def write_exit_code(path: Path, code: int) -> None:
    """Write ``code`` to ``path`` so that a reader sees either no file or the whole code."""
    temporary = path.parent / f".{path.name}.{os.getpid()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(f"{code}\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_exit_code(path: Path) -> int | None:
    """The exit code a wrapper wrote to ``path``; None when there is none (yet)."""
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _ignore(signal_number: int, frame: FrameType | None) -> None:
    """A handler rather than SIG_IGN: handled signals are reset to their default in the
    command, while ignored ones would stay ignored there too."""


def run(command: Sequence[str], exit_code_file: Path) -> int:
    """Run ``command`` to its end, record its exit code in ``exit_code_file`` and return it."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, _ignore)
    try:
        child = subprocess.Popen(list(command))
    except FileNotFoundError as error:
        print(f"streamjobs wrapper: cannot run {command[0]!r}: {error}", file=sys.stderr)
        code = COMMAND_NOT_FOUND
    except OSError as error:
        print(f"streamjobs wrapper: cannot run {command[0]!r}: {error}", file=sys.stderr)
        code = COMMAND_NOT_EXECUTABLE
    else:
        code = exit_code_of(child.wait())
    write_exit_code(exit_code_file, code)
    return code


class Arguments:
    """The wrapper's command line: where the exit code goes, and the command."""

    def __init__(self, exit_code_file: Path, command: list[str]) -> None:
        self.exit_code_file = exit_code_file
        self.command = command


def parse_args(argv: Sequence[str] | None = None) -> Arguments:
    """``--exit-code-file F -- command...``, as the launcher writes it, read directly; anything
    else (``--help``, a mistake) goes to ``argparse``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if len(arguments) > 3 and arguments[0] == "--exit-code-file" and arguments[2] == "--":
        return Arguments(Path(arguments[1]), arguments[3:])
    return _parse_with_argparse(arguments)


def _parse_with_argparse(argv: list[str]) -> Arguments:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m streamjobs.launch.wrapper",
        description="Run a command and record its exit code in a file.",
    )
    parser.add_argument("--exit-code-file", required=True, type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no command given (put it after --)")
    return Arguments(args.exit_code_file, args.command)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run(args.command, args.exit_code_file)


if __name__ == "__main__":
    sys.exit(main())
