"""Read the bench's outputs with Spark for the figures' checks: one process serves a whole run
(``python -m bench.output_reader``, asked over its stdin, answering on its stdout)."""

from __future__ import annotations

import argparse
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

ANSWER_SECONDS = 900.0
REPOSITORY = Path(__file__).resolve().parent.parent


class OutputReader:
    """A running reader process (``serve``)."""

    def __init__(self, conf: Mapping[str, str], directory: Path) -> None:
        self.conf = dict(conf)
        directory.mkdir(parents=True, exist_ok=True)
        self._stderr = directory / "read-outputs.err"
        command = [
            sys.executable,
            "-m",
            "bench.output_reader",
            *(f"--conf={key}={value}" for key, value in self.conf.items()),
        ]
        environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
        with self._stderr.open("wb") as err:
            self._process = subprocess.Popen(
                command,
                cwd=directory,
                env=environment,
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


QUIET_JVM = "-XX:TieredStopAtLevel=1"


def serve(argv: Sequence[str] | None = None) -> int:
    """The reader process: one JSON request a line on stdin, one JSON answer a line on stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    args = parser.parse_args(argv)
    settings = {
        "spark.master": "local[2]",
        "spark.app.name": "bench-read-outputs",
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": QUIET_JVM,
    }
    settings.update(setting.partition("=")[::2] for setting in args.conf)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line), settings)), flush=True)
    return 0


def answer(request: dict[str, Any], settings: dict[str, str]) -> dict[str, Any]:
    from pyspark.sql import SparkSession  # only the reader process loads Spark

    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if "count" in request:
            reader = spark.read.format(request["count"])
            return {"answer": {path: reader.load(path).count() for path in request["paths"]}}
        column = request["values"]
        return {
            "answer": {
                path: [row[0] for row in spark.read.parquet(path).select(column).collect()]
                for path in request["paths"]
            }
        }
    except Exception as error:  # any failure is the answer; the process serves the next
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(serve())
