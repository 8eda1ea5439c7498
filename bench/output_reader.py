"""The one process that reads the bench's outputs for its checks (``bench/read_outputs.py``).

Figure 1 counts its runs' rows and figures 2-3 list their sessions' values, each after its runs;
both ask the same running reader, so a bench run starts one JVM for its checks instead of one a
figure. The reader is started with the Spark settings of the first check (the connector jars of
figure 1's sinks) and started again only when a later check needs a setting it lacks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.processes import SubjectFailed, stderr_tail

READER_SCRIPT = Path(__file__).resolve().with_name("read_outputs.py")
ANSWER_SECONDS = 900.0
"""How long one check may take before the reader is killed and the check fails."""


class OutputReader:
    """A running ``read_outputs.py``, asked over its stdin and answering on its stdout."""

    def __init__(self, conf: Mapping[str, str], directory: Path) -> None:
        self.conf = dict(conf)
        directory.mkdir(parents=True, exist_ok=True)
        self._stderr = directory / "read-outputs.err"
        command = [
            sys.executable,
            str(READER_SCRIPT),
            *(f"--conf={key}={value}" for key, value in self.conf.items()),
        ]
        with self._stderr.open("wb") as err:
            self._process = subprocess.Popen(
                command,
                cwd=directory,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                start_new_session=True,
            )

    def serves(self, conf: Mapping[str, str]) -> bool:
        """Whether this reader runs with every one of ``conf``'s settings."""
        return self._process.poll() is None and all(
            self.conf.get(key) == value for key, value in conf.items()
        )

    def count(self, data_format: str, paths: Sequence[Path]) -> dict[str, int]:
        """Rows of each output (``parquet`` or ``delta``), by path."""
        return self._ask({"count": data_format, "paths": [str(path) for path in paths]})

    def values(self, column: str, paths: Sequence[Path]) -> dict[str, list[Any]]:
        """Every row's ``column`` in each Parquet output, by path."""
        return self._ask({"values": column, "paths": [str(path) for path in paths]})

    def close(self) -> None:
        if self._process.stdin:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._kill()
            self._process.wait()

    def _kill(self) -> None:
        """SIGKILL to the reader's whole process group: its Python process and its JVM."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)

    def _ask(self, request: dict[str, Any]) -> Any:
        process = self._process
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise SubjectFailed(f"the output reader is gone\n{stderr_tail(self._stderr)}") from None
        watchdog = threading.Timer(ANSWER_SECONDS, self._kill)
        watchdog.start()
        try:
            for line in process.stdout:
                if line.startswith("{"):
                    reply = json.loads(line)
                    if "error" in reply:
                        raise SubjectFailed(f"reading {request['paths']}: {reply['error']}")
                    return reply["answer"]
        finally:
            watchdog.cancel()
        raise SubjectFailed(
            f"the output reader exited (or gave no answer in {ANSWER_SECONDS:.0f} s)\n"
            f"{stderr_tail(self._stderr)}"
        )


_shared: OutputReader | None = None


def shared_reader(conf: Mapping[str, str], directory: Path) -> OutputReader:
    """The bench run's reader, started again if it lacks one of ``conf``'s settings."""
    global _shared
    if _shared is None or not _shared.serves(conf):
        close_shared_reader()
        _shared = OutputReader(conf, directory)
    return _shared


def close_shared_reader() -> None:
    global _shared
    if _shared is not None:
        _shared.close()
        _shared = None
