"""``python -m streamjobs.launch.wrapper --exit-code-file F [--fence V] -- <command...>``: a
driver's parent.

A driver's exit code is visible only to its parent, and the server that started a driver may
have been restarted since: the process that polls is then not the parent. So every driver runs
under this wrapper, which leads its process group, waits for the command and writes the exit
code to a file (atomically) before exiting with that same code. A death by signal N is written
as 128 + N, as a shell reports it. The attempt's fencing value, on the wrapper's command line
where a restarted server looks for it, is written on the line after the code: an exit code
read under another fence is not this attempt's.

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


def write_exit_code(path: Path, code: int, fence: str = "") -> None:
    """Write ``code`` (and ``fence``) to ``path`` so that a reader sees either no file or all."""
    temporary = path.parent / f".{path.name}.{os.getpid()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(f"{code}\n{fence}\n" if fence else f"{code}\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_exit_code(path: Path, fence: str | None = None) -> int | None:
    """The exit code a wrapper wrote to ``path``; None when there is none (yet), or when
    ``fence`` is given and the code was written under another one."""
    try:
        lines = path.read_text(encoding="ascii").splitlines()
        code = int(lines[0].strip())
    except (OSError, ValueError, IndexError):
        return None
    written_fence = lines[1].strip() if len(lines) > 1 else ""
    return code if fence is None or written_fence == fence else None


def _ignore(signal_number: int, frame: FrameType | None) -> None:
    """A handler rather than SIG_IGN: handled signals are reset to their default in the
    command, while ignored ones would stay ignored there too."""


def run(command: Sequence[str], exit_code_file: Path, fence: str = "") -> int:
    """Run ``command`` to its end, record its exit code (and ``fence``) in ``exit_code_file``
    and return it."""
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
    write_exit_code(exit_code_file, code, fence)
    return code


class Arguments:
    """The wrapper's command line: where the exit code goes, the attempt's fence, the command."""

    def __init__(self, exit_code_file: Path, command: list[str], fence: str = "") -> None:
        self.exit_code_file = exit_code_file
        self.command = command
        self.fence = fence


def parse_args(argv: Sequence[str] | None = None) -> Arguments:
    """``--exit-code-file F [--fence V] -- command...``, as the launcher writes it, read
    directly; anything else (``--help``, a mistake) goes to ``argparse``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if len(arguments) > 3 and arguments[0] == "--exit-code-file" and arguments[2] == "--":
        return Arguments(Path(arguments[1]), arguments[3:])
    if (
        len(arguments) > 5
        and arguments[0] == "--exit-code-file"
        and arguments[2] == "--fence"
        and arguments[4] == "--"
    ):
        return Arguments(Path(arguments[1]), arguments[5:], fence=arguments[3])
    return _parse_with_argparse(arguments)


def _parse_with_argparse(argv: list[str]) -> Arguments:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m streamjobs.launch.wrapper",
        description="Run a command and record its exit code in a file.",
    )
    parser.add_argument("--exit-code-file", required=True, type=Path)
    parser.add_argument("--fence", default="", help="the attempt's fencing value")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no command given (put it after --)")
    return Arguments(args.exit_code_file, args.command, fence=args.fence)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run(args.command, args.exit_code_file, args.fence)


if __name__ == "__main__":
    sys.exit(main())
